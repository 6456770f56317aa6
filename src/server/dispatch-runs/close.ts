// closeDispatchRun and the reaper share one close: the run turns terminal, its unfinished legs settle
// (queued → not_reached, running → failed) and every credential it handed out dies, all in one
// transaction. The terminal write is conditional on the run still running, so whichever of a
// client's close and the reaper's comes second finds nothing to close and answers 409.
import type { CloseStatus, DispatchRunClose, StopReason } from '../../contract/types.js';
import { transaction, type Database } from '../db.js';
import { iso } from '../ids.js';
import { invalid, ServiceError, type Reply, type RequestContext } from '../kernel.js';
import { getRunRow, runForCaller, toRun, type RunRow } from './store.js';

export const runClosed = () => new ServiceError(409, 'RUN_CLOSED', 'the dispatch run is already closed');

/** Status of a close that does not send one (docs/service.md; the contract's states and transitions fixes the first three). */
export function derivedStatus(stopReason: StopReason): CloseStatus {
  switch (stopReason) {
    case 'halted':
    case 'abandoned':
      return 'failed';
    case 'interrupted':
      return 'cancelled';
    default:
      return 'succeeded';
  }
}

/** Closes run `id` if it is still running; throws RUN_CLOSED otherwise. */
export function closeRun(db: Database, id: string, stopReason: StopReason, status: CloseStatus | undefined, now: Date): RunRow {
  const at = iso(now);
  return transaction(db, () => {
    const closed = db
      .prepare(
        `UPDATE dispatch_runs SET status = ?, stop_reason = ?, ended_at = ?
          WHERE id = ? AND status = 'running'`,
      )
      .run(status ?? derivedStatus(stopReason), stopReason, at, id);
    if (Number(closed.changes) === 0) throw runClosed();
    db.prepare(
      `UPDATE dispatch_cards SET disposition = CASE disposition WHEN 'queued' THEN 'not_reached' ELSE 'failed' END,
         updated_at = ?
        WHERE run_id = ? AND disposition IN ('queued', 'running')`,
    ).run(at, id);
    // "Every token handed out is recorded against the run and revoked when the run ends" (getGitCredential),
    // and the run's own credential dies with it (docs/service.md).
    db.prepare('UPDATE git_tokens SET revoked_at = ? WHERE run_id = ? AND revoked_at IS NULL').run(at, id);
    db.prepare('UPDATE run_credentials SET revoked_at = ? WHERE run_id = ? AND revoked_at IS NULL').run(at, id);
    return getRunRow(db, id)!;
  });
}

export function closeRunRoute(ctx: RequestContext): Reply {
  const body = ctx.body as DispatchRunClose;
  const run = runForCaller(ctx.db, ctx.principal, ctx.params.id ?? '');
  // `abandoned` records that the server's reaper gave up on a silent run; a client that is alive
  // enough to close says why it stopped instead (a crashed one is recovered as `interrupted`).
  if (body.stopReason === 'abandoned') {
    throw invalid('stopReason abandoned is set only by the server when it reaps a silent run');
  }
  const closed = closeRun(ctx.db, run.id, body.stopReason, body.status, ctx.now());
  return { status: 200, body: toRun(ctx.db, closed) };
}
