// Reading runs and their legs out of the store, and the one rule of who may see a run: a personal
// token sees the runs of projects it may browse in its workspace; a hosted run's own credential
// sees its own run and nothing else. Anything outside answers the same 404 as a missing run
// (the contract's authentication), so no caller learns which run ids exist.
import type { DispatchCard, DispatchRun } from '../../contract/types.js';
import type { Database } from '../db.js';
import { notFound, type Principal } from '../kernel.js';
import { projectById } from '../core/access.js';
import { runnerOf } from '../hosted-executor/store.js';

export interface RunRow {
  id: string;
  workspace_id: string;
  project_id: string;
  command: string;
  origin: string;
  scope_work_item_id: string | null;
  scope_label: string | null;
  status: string;
  stop_reason: string | null;
  agent: string | null;
  model: string | null;
  started_at: string;
  ended_at: string | null;
  last_heartbeat_at: string | null;
  created_by_id: string | null;
  idempotency_key: string | null;
  seq: number;
}

export interface CardRow {
  run_id: string;
  position: number;
  work_item_id: string;
  work_item_key: string;
  disposition: string;
  skip_reason: string | null;
  session_branch: string | null;
  exit_code: number | null;
  updated_at: string;
}

export const getRunRow = (db: Database, id: string): RunRow | undefined => db.prepare('SELECT * FROM dispatch_runs WHERE id = ?').get(id) as RunRow | undefined;

export const cardRows = (db: Database, runId: string): CardRow[] =>
  db.prepare('SELECT * FROM dispatch_cards WHERE run_id = ? ORDER BY position').all(runId) as unknown as CardRow[];

export const toCard = (c: CardRow): DispatchCard => ({
  workItemKey: c.work_item_key,
  disposition: c.disposition,
  skipReason: c.skip_reason,
  sessionBranch: c.session_branch,
  exitCode: c.exit_code,
  updatedAt: c.updated_at,
});

/** The run record of the contract's fields, with its legs in their recorded order. */
export function toRun(db: Database, r: RunRow): DispatchRun {
  return {
    id: r.id,
    projectId: r.project_id,
    command: r.command,
    origin: r.origin,
    scopeWorkItemId: r.scope_work_item_id,
    scopeLabel: r.scope_label,
    status: r.status,
    stopReason: r.stop_reason,
    agent: r.agent,
    model: r.model,
    startedAt: r.started_at,
    endedAt: r.ended_at,
    lastHeartbeatAt: r.last_heartbeat_at,
    createdById: r.created_by_id,
    // The runner a hosted executor started for the run (its engine, name, exit and logs), if any.
    agentInstance: runnerOf(db, r.id) as DispatchRun['agentInstance'],
    cards: cardRows(db, r.id).map(toCard),
    seq: r.seq,
  };
}

/** Whether `principal` may see run `r` at all (not whether it may act on it). */
export function runVisibleTo(db: Database, principal: Principal, r: RunRow): boolean {
  if (principal.kind === 'run') return principal.runId === r.id;
  return principal.workspaceId === r.workspace_id && projectById(db, principal, r.project_id) !== null;
}

/** The run named by the path, or the contract's 404 when it is missing or not the caller's to see. */
export function runForCaller(db: Database, principal: Principal, id: string): RunRow {
  const row = getRunRow(db, id);
  if (!row || !runVisibleTo(db, principal, row)) throw notFound('dispatch run');
  return row;
}

/** Whether `key` is one of the run's cards (an event may only name those; a run credential may read them). */
export function runOwnsWorkItem(db: Database, runId: string, key: string): boolean {
  return db.prepare('SELECT 1 FROM dispatch_cards WHERE run_id = ? AND work_item_key = ?').get(runId, key) !== undefined;
}
