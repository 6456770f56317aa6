// heartbeatDispatchRun: a local run's operator says "still alive". The server stamps its own clock (the
// client's is never trusted), and the stamp is conditional on the run still running, so a beat
// that arrives after a close or a reap answers 409 instead of reviving the run.
import { iso } from '../ids.js';
import { ServiceError, type Reply, type RequestContext } from '../kernel.js';
import { runClosed } from './close.js';
import { runForCaller } from './store.js';

export function heartbeatRoute(ctx: RequestContext): Reply {
  const { db, principal } = ctx;
  const run = runForCaller(db, principal, ctx.params.id ?? '');
  // The caller can see the run (else 404 above) but is not the one running it: a permission
  // matter, not an existence one.
  if (principal.kind !== 'pat' || principal.userId !== run.created_by_id) {
    throw new ServiceError(403, 'FORBIDDEN', 'only the operator who opened the run may beat for it');
  }
  if (run.status !== 'running') throw runClosed();
  if (run.origin !== 'local') {
    throw new ServiceError(409, 'CONFLICT', 'heartbeats are for local runs; a hosted run is watched by its platform');
  }
  const r = db.prepare(`UPDATE dispatch_runs SET last_heartbeat_at = ? WHERE id = ? AND status = 'running'`).run(iso(ctx.now()), run.id);
  if (Number(r.changes) === 0) throw runClosed();
  return { status: 204 };
}
