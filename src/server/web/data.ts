// What the pages show, read straight from the store with the caller's visibility (the same rules
// as the API: a run of a project the token may not browse does not exist for it).
import type { DispatchRun } from '../../contract/types.js';
import { browsableProjects } from '../core/access.js';
import type { Database } from '../db.js';
import type { Principal } from '../kernel.js';
import { runForCaller, toRun } from '../dispatch-runs/store.js';

export interface RunRowView {
  id: string;
  projectKey: string;
  command: string;
  origin: string;
  scopeKey: string | null;
  status: string;
  stopReason: string | null;
  startedAt: string;
  endedAt: string | null;
  cards: number;
  implemented: number;
  failed: number;
}

/** The runs the caller may see, newest first. */
export function listRuns(db: Database, principal: Principal, limit = 200): RunRowView[] {
  const scope = browsableProjects(principal);
  const rows = db
    .prepare(
      `SELECT r.id, p.key AS project_key, r.command, r.origin, w.key AS scope_key, r.status, r.stop_reason, r.started_at, r.ended_at,
              (SELECT COUNT(*) FROM dispatch_cards c WHERE c.run_id = r.id) AS cards,
              (SELECT COUNT(*) FROM dispatch_cards c WHERE c.run_id = r.id AND c.disposition = 'implemented') AS implemented,
              (SELECT COUNT(*) FROM dispatch_cards c WHERE c.run_id = r.id AND c.disposition = 'failed') AS failed
         FROM dispatch_runs r JOIN projects p ON p.id = r.project_id LEFT JOIN work_items w ON w.id = r.scope_work_item_id
        WHERE ${scope.sql}
        ORDER BY r.started_at DESC, r.rowid DESC LIMIT ?`,
    )
    .all(...scope.params, limit) as Record<string, string | number | null>[];
  return rows.map((r) => ({
    id: String(r.id),
    projectKey: String(r.project_key),
    command: String(r.command),
    origin: String(r.origin),
    scopeKey: (r.scope_key as string | null) ?? null,
    status: String(r.status),
    stopReason: (r.stop_reason as string | null) ?? null,
    startedAt: String(r.started_at),
    endedAt: (r.ended_at as string | null) ?? null,
    cards: Number(r.cards),
    implemented: Number(r.implemented),
    failed: Number(r.failed),
  }));
}

export interface LegView {
  key: string;
  title: string | null;
  disposition: string;
  skipReason: string | null;
  branch: string | null;
  exitCode: number | null;
  startedAt: string | null;
  endedAt: string | null;
}

export interface RunView {
  run: DispatchRun;
  projectKey: string;
  scopeKey: string | null;
  legs: LegView[];
}

/** One run with each card's leg times (from its events), or null when the caller may not see it. */
export function runView(db: Database, principal: Principal, id: string): RunView | null {
  let run: DispatchRun;
  try {
    run = toRun(db, runForCaller(db, principal, id));
  } catch {
    return null;
  }
  const project = db.prepare('SELECT key FROM projects WHERE id = ?').get(run.projectId) as { key: string } | undefined;
  const scope = run.scopeWorkItemId
    ? (db.prepare('SELECT key FROM work_items WHERE id = ?').get(run.scopeWorkItemId) as { key: string } | undefined)
    : undefined;
  const times = db
    .prepare(
      `SELECT work_item_key AS key,
              MIN(CASE WHEN disposition = 'running' THEN created_at END) AS started,
              MAX(CASE WHEN disposition IS NOT NULL AND disposition <> 'running' AND disposition <> 'queued' THEN created_at END) AS ended
         FROM dispatch_events WHERE run_id = ? AND work_item_key IS NOT NULL AND disposition IS NOT NULL GROUP BY work_item_key`,
    )
    .all(id) as { key: string; started: string | null; ended: string | null }[];
  const byKey = new Map(times.map((t) => [t.key, t]));
  const titles = db.prepare(`SELECT w.key, w.title FROM dispatch_cards c JOIN work_items w ON w.id = c.work_item_id WHERE c.run_id = ?`).all(id) as {
    key: string;
    title: string;
  }[];
  const titleOf = new Map(titles.map((t) => [t.key, t.title]));
  const legs = run.cards.map((c) => {
    const t = byKey.get(c.workItemKey);
    const started = t?.started ?? null;
    return {
      key: c.workItemKey,
      title: titleOf.get(c.workItemKey) ?? null,
      disposition: String(c.disposition),
      skipReason: c.skipReason,
      branch: c.sessionBranch,
      exitCode: c.exitCode,
      startedAt: started,
      endedAt: c.disposition === 'running' ? null : started ? (t?.ended ?? c.updatedAt) : null,
    };
  });
  return { run, projectKey: project?.key ?? '', scopeKey: scope?.key ?? null, legs };
}
