// appendDispatchEvents: append a batch of events to a run's ordered stream. The whole batch is checked
// before anything is written, then stored in one transaction that also moves the legs the events
// name, so a reader never sees an event whose disposition has not landed (or the reverse).
import { EVENT_BODY_MAX_BYTES, type DispatchEventInput, type DispatchEventsAppend } from '../../contract/types.js';
import { transaction, type Database } from '../db.js';
import { iso } from '../ids.js';
import { invalid, type Reply, type RequestContext } from '../kernel.js';
import { runClosed } from './close.js';
import { cardRows, getRunRow, runForCaller, toCard } from './store.js';

/** Bodies are refused whole above the limit, never truncated (the contract's events and limits). */
function checkEvent(e: DispatchEventInput, i: number, cardKeys: Set<string>): void {
  if (e.workItemKey !== undefined && !cardKeys.has(e.workItemKey)) {
    throw invalid(`events[${i}]: ${e.workItemKey} is not a card of this run (an event never adds a card)`);
  }
  // A disposition belongs to a leg; a run-scoped event has none to move.
  if (e.disposition !== undefined && e.workItemKey === undefined) {
    throw invalid(`events[${i}]: a disposition needs the workItemKey of the leg it moves`);
  }
  if (e.body !== undefined) {
    const bytes = Buffer.byteLength(e.body, 'utf8');
    if (bytes > EVENT_BODY_MAX_BYTES) {
      throw invalid(`events[${i}]: body is ${bytes} bytes of UTF-8, above the ${EVENT_BODY_MAX_BYTES}-byte limit`);
    }
  }
}

export function appendEvents(ctx: RequestContext): Reply {
  const { db } = ctx;
  const { events } = ctx.body as DispatchEventsAppend;
  const run = runForCaller(db, ctx.principal, ctx.params.id ?? '');

  return transaction(db, () => {
    // Re-read inside the transaction: a close or a reap may have won since the lookup.
    const current = getRunRow(db, run.id)!;
    if (current.status !== 'running') throw runClosed();
    const cardKeys = new Set(cardRows(db, run.id).map((c) => c.work_item_key));
    events.forEach((e, i) => checkEvent(e, i, cardKeys));

    const at = iso(ctx.now());
    const insert = db.prepare(
      `INSERT INTO dispatch_events (run_id, seq, work_item_key, disposition, session_branch, exit_code, body, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    // A leg keeps its sessionBranch and exitCode until an event names new ones.
    const moveLeg = db.prepare(
      `UPDATE dispatch_cards
          SET disposition = COALESCE(?, disposition), session_branch = COALESCE(?, session_branch),
              exit_code = COALESCE(?, exit_code), updated_at = ?
        WHERE run_id = ? AND work_item_key = ?`,
    );
    const moved = new Set<string>();
    let seq = current.seq;
    for (const e of events) {
      seq += 1;
      insert.run(run.id, seq, e.workItemKey ?? null, e.disposition ?? null, e.sessionBranch ?? null, e.exitCode ?? null, e.body ?? null, at);
      const touchesLeg = e.disposition !== undefined || e.sessionBranch !== undefined || e.exitCode !== undefined;
      if (e.workItemKey !== undefined && touchesLeg) {
        moveLeg.run(e.disposition ?? null, e.sessionBranch ?? null, e.exitCode ?? null, at, run.id, e.workItemKey);
        moved.add(e.workItemKey);
      }
    }
    db.prepare('UPDATE dispatch_runs SET seq = ? WHERE id = ?').run(seq, run.id);
    const cards = cardRows(db, run.id)
      .filter((c) => moved.has(c.work_item_key))
      .map(toCard);
    return { status: 200, body: { runId: run.id, appended: events.length, seq, cards } };
  });
}

/** Event `body` retention (the contract's limits). */
export const EVENT_BODY_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

/** Clears the `body` of events older than the retention; the events themselves stay. */
export function clearOldEventBodies(db: Database, now: Date): number {
  const cutoff = iso(new Date(now.getTime() - EVENT_BODY_RETENTION_MS));
  const r = db.prepare('UPDATE dispatch_events SET body = NULL WHERE body IS NOT NULL AND created_at < ?').run(cutoff);
  return Number(r.changes);
}
