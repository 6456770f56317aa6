// openDispatchRun: open a dispatch run. It records the run only: no work item moves, nothing is
// written anywhere else. Checks run in the order a caller can act on them: the project (404), a
// repeated idempotency key (the existing run, before anything else could refuse the retry), the
// scope and cards (422), then the overlap with other running runs (409).
import type { DispatchCardInput, DispatchRunOpen } from '../../contract/types.js';
import { transaction, type Database } from '../db.js';
import { iso, newId } from '../ids.js';
import { invalid, ServiceError, type Reply, type RequestContext } from '../kernel.js';
import { toRun, type RunRow } from './store.js';
import { projectForKey } from '../core/access.js';

interface ItemRef {
  id: string;
  key: string;
}

const itemOfProject = (db: Database, projectId: string, key: string): ItemRef | undefined =>
  db.prepare('SELECT id, key FROM work_items WHERE project_id = ? AND key = ?').get(projectId, key) as ItemRef | undefined;

export function openRun(ctx: RequestContext): Reply {
  const { db, principal } = ctx;
  // A run credential cannot open runs (the HTTP layer already refuses it); only a person's token
  // has a user to record as the opener.
  if (principal.kind !== 'pat') throw new ServiceError(403, 'FORBIDDEN', 'a run credential cannot open runs');
  const body = ctx.body as DispatchRunOpen;
  const project = projectForKey(db, principal, body.projectKey);

  return transaction(db, () => {
    if (body.idempotencyKey !== undefined) {
      const existing = db
        .prepare('SELECT * FROM dispatch_runs WHERE workspace_id = ? AND idempotency_key = ?')
        .get(principal.workspaceId, body.idempotencyKey) as RunRow | undefined;
      if (existing) {
        // The key is the client's "same request" marker; reused for another project it is a
        // client bug, not a retry, and answering that project's run would cross projects.
        if (existing.project_id !== project.id) {
          throw new ServiceError(409, 'CONFLICT', 'idempotencyKey already names a run of another project');
        }
        return { status: 201, body: { run: toRun(db, existing), created: false } };
      }
    }

    let scope: ItemRef | undefined;
    if (body.scopeKey !== undefined) {
      scope = itemOfProject(db, project.id, body.scopeKey);
      if (!scope) throw invalid(`scopeKey ${body.scopeKey} is not a work item of project ${body.projectKey}`);
    }
    const cards = resolveCards(db, project.id, body.projectKey, body.cards ?? []);
    refuseOverlap(db, project.id, cards);

    const id = newId('run');
    const now = iso(ctx.now());
    const origin = body.origin ?? 'local';
    db.prepare(
      `INSERT INTO dispatch_runs (id, workspace_id, project_id, command, origin, scope_work_item_id,
         scope_label, status, agent, model, started_at, last_heartbeat_at, created_by_id,
         idempotency_key, seq)
       VALUES (?, ?, ?, ?, ?, ?, ?, 'running', ?, ?, ?, ?, ?, ?, 0)`,
    ).run(
      id,
      principal.workspaceId,
      project.id,
      body.command,
      origin,
      scope?.id ?? null,
      // Without a label the scope's key names the run: short, stable and what the operator typed.
      body.scopeLabel ?? scope?.key ?? null,
      body.agent ?? null,
      body.model ?? null,
      now,
      // A local run is counted silent from its open, so one that never beats is still reaped;
      // a hosted run is watched by its platform and never reaped here.
      origin === 'local' ? now : null,
      principal.userId,
      body.idempotencyKey ?? null,
    );
    const insert = db.prepare(
      `INSERT INTO dispatch_cards (run_id, position, work_item_id, work_item_key, disposition, skip_reason, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
    );
    cards.forEach((c, i) => {
      insert.run(id, i, c.id, c.key, c.skipReason === null ? 'queued' : 'skipped', c.skipReason, now);
    });
    const row = db.prepare('SELECT * FROM dispatch_runs WHERE id = ?').get(id) as unknown as RunRow;
    return { status: 201, body: { run: toRun(db, row), created: true } };
  });
}

interface ResolvedCard extends ItemRef {
  skipReason: string | null;
}

/** Each card must be a distinct work item of the run's project; the error names the key. */
function resolveCards(db: Database, projectId: string, projectKey: string, input: DispatchCardInput[]): ResolvedCard[] {
  const seen = new Set<string>();
  return input.map((c) => {
    if (seen.has(c.workItemKey)) throw invalid(`card ${c.workItemKey} is listed more than once`);
    seen.add(c.workItemKey);
    const item = itemOfProject(db, projectId, c.workItemKey);
    if (!item) throw invalid(`card ${c.workItemKey} is not a work item of project ${projectKey}`);
    return { ...item, skipReason: c.skipReason ?? null };
  });
}

/**
 * A card about to be worked (not skipped) may not be in another running run of the project, whatever
 * its leg there has come to: two machines sharing one queue learn here that a card is taken
 * (docs/dispatch.md#the-wire). A leg that settled implemented moved no status, so its card looks
 * ready to the other machine until that run closes; held only while queued or running, it was run twice.
 */
function refuseOverlap(db: Database, projectId: string, cards: ResolvedCard[]): void {
  const wanted = cards.filter((c) => c.skipReason === null);
  if (wanted.length === 0) return;
  const taken = db
    .prepare(
      `SELECT c.work_item_id AS id, MIN(r.id) AS run FROM dispatch_cards c JOIN dispatch_runs r ON r.id = c.run_id
        WHERE r.project_id = ? AND r.status = 'running' AND c.skip_reason IS NULL
          AND c.work_item_id IN (SELECT value FROM json_each(?)) GROUP BY c.work_item_id`,
    )
    .all(projectId, JSON.stringify(wanted.map((c) => c.id))) as { id: string; run: string }[];
  if (taken.length === 0) return;
  const runOf = new Map(taken.map((t) => [t.id, t.run]));
  // Each card with the run that holds it: a person (or the client's one line) can look that run up.
  const held = wanted.filter((c) => runOf.has(c.id)).map((c) => `${c.key} (in run ${runOf.get(c.id)})`);
  throw new ServiceError(409, 'CONFLICT', `already in another running run of this project: ${held.join(', ')}`);
}
