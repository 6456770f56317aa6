// The reaper: a local run whose operator stopped beating is closed `abandoned` (status `failed`,
// as a close without status would derive) once it has been silent for `reapAfterMs`. Each run is
// closed through the same conditional close as closeDispatchRun, so a client close racing the reaper
// settles the run exactly once and the loser gets 409. The same tick clears event bodies past
// their 30-day retention.
import type { Database } from '../db.js';
import { iso } from '../ids.js';
import { ServiceError, type ServiceConfig } from '../kernel.js';
import { closeRun } from './close.js';
import { clearOldEventBodies } from './events.js';

/** One pass; returns the ids of the runs it closed. */
export function reapOnce(db: Database, config: Pick<ServiceConfig, 'reapAfterMs'>, now: Date): string[] {
  const cutoff = iso(new Date(now.getTime() - config.reapAfterMs));
  const silent = db
    .prepare(
      `SELECT id FROM dispatch_runs
        WHERE status = 'running' AND origin = 'local' AND last_heartbeat_at < ?`,
    )
    .all(cutoff) as { id: string }[];
  const reaped: string[] = [];
  for (const { id } of silent) {
    try {
      closeRun(db, id, 'abandoned', 'failed', now);
      reaped.push(id);
    } catch (err) {
      // Closed by its client between the select and the close: nothing left to reap.
      if (!(err instanceof ServiceError && err.code === 'RUN_CLOSED')) throw err;
    }
  }
  clearOldEventBodies(db, now);
  return reaped;
}

/** Starts the periodic reaper; the returned function stops it. */
export function startReaper(deps: { db: Database; config: ServiceConfig; now(): Date }): () => void {
  const timer = setInterval(() => {
    try {
      reapOnce(deps.db, deps.config, deps.now());
    } catch (err) {
      // A failed pass (e.g. the database is busy) is retried on the next tick; it must not take
      // the server down.
      process.emitWarning(`dispatch-runs reaper: ${err instanceof Error ? err.message : String(err)}`);
    }
  }, deps.config.reapEveryMs);
  // The reaper alone never keeps the process alive.
  timer.unref();
  return () => clearInterval(timer);
}
