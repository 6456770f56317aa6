// The close of a run, as decided: journalled first (so `svc runs recover` repeats this close, not
// `interrupted`), pending events flushed, the heartbeat stopped, then the close sent (closeDispatchRun). A
// run whose events cannot all be delivered is left open for recover rather than closed without
// its dispositions. Whatever happens, the stream, heartbeat, journal and lock are let go.
import { EXIT, exitCodeFor } from '../../api/errors.js';
import type { DispatchRun } from '../../contract/types.js';
import { closeRun } from '../wire/close.js';
import type { EventStream } from '../wire/event-stream.js';
import { RunClosedError, isRetryable, serviceErrorOf, type LegSummary } from '../ports.js';
import type { Selection } from '../select/types.js';
import { describeFsError, stateFolderFault } from '../state/folder.js';
import type { CloseDecision } from './close-decision.js';
import type { LocalState } from './local-state.js';
import type { RunStops } from './run-stops.js';
import { summaryOf } from './summary.js';
import type { DispatchDeps, DispatchOptions, RunSummary } from './types.js';

const SIGNAL_FLUSH_MS = 10_000;
const CLOSE_FLUSH_MS = 5 * 60_000;

export interface Closing {
  run: DispatchRun;
  selection: Selection;
  legs: LegSummary[];
  closeOut: RunSummary['closeOut'];
  local: LocalState;
  stream: EventStream;
  heartbeat: { stop(): Promise<void> };
  stops: RunStops;
  decision: CloseDecision;
  exitCode: number;
  /** Interrupted or timed out: pending events get the short flush (`timeouts.flushMs`). */
  hurried: boolean;
}

export async function closeAsDecided(opts: DispatchOptions, deps: DispatchDeps, c: Closing): Promise<RunSummary> {
  const { service, output } = deps;
  const { run, selection, legs, closeOut, stream, heartbeat, stops } = c;
  const { journal } = c.local;
  const { stopReason, status } = c.decision;
  let exitCode = c.exitCode;
  let final: DispatchRun | null = null;
  let note = selection.note;
  try {
    // The decided close is journalled before anything can fail: a run left open (service gone,
    // disk full) is closed by `svc runs recover` as decided here, not `interrupted`.
    // A journal that cannot take it (a full disk) does not keep the close from the service.
    if (!stops.closedByServer) {
      try {
        journal.markClosing(stopReason, status);
      } catch (error) {
        const local = stateFolderFault(error, deps.stateDir);
        output.warn(`cannot journal the close of run ${run.id}: ${local?.message ?? describeFsError(error)}`);
      }
    }
    if (!stops.closedByServer) {
      const flushed = await stream.flush(c.hurried ? (opts.timeouts.flushMs ?? SIGNAL_FLUSH_MS) : CLOSE_FLUSH_MS);
      // Events the service refused outright (a 4xx) can never be delivered: close anyway.
      const undeliverable = stream.failure !== null && !isRetryable(stream.failure);
      // (The stream's and the heartbeat's callbacks may have seen a close during the flush.)
      if (!flushed && !stops.closedByServer && !undeliverable) {
        // Closing now would drop dispositions for good: leave the run to `svc runs recover`.
        output.warn(`${stream.pending} event(s) not delivered; run ${run.id} left open for \`svc runs recover\``);
        return { ...summaryOf(selection, run, exitCode || exitCodeFor(stream.failure ?? stops.failure), note, legs), stopReason, status: 'running', closeOut };
      }
    }
    // The close is the run's last word: a beat racing it would come back 409 and read as a remote close.
    await heartbeat.stop();
    if (!stops.closedByServer) {
      // An ambiguous failure is settled by reading the run, and the close repeated while it is
      // still running: exit by the run's outcome, not 5, when the close landed after all.
      const closed = await closeRun(
        service,
        run.id,
        { stopReason, status },
        {
          warn: (m) => output.warn(m),
          ...(opts.giveUpAfterMs !== undefined ? { giveUpAfterMs: opts.giveUpAfterMs } : {}),
        },
      );
      if (closed.kind !== 'closed') stops.closed(new RunClosedError(run.id));
      final = closed.run;
    }
    if (stops.closedByServer) {
      // The run ended on the service's side (reaper, another client): reads only from here.
      output.warn(`run ${run.id} was closed by the service; stopped locally`);
      note = 'closed by the service';
      exitCode = EXIT.failed;
      final ??= await service.getDispatchRun(run.id).catch(() => null);
    }
    try {
      journal.markClosed(final?.stopReason ?? null, final?.status ?? null);
    } catch {
      // The service holds the close; recover finds it already closed and only notes it.
    }
  } catch (error) {
    output.warn(`could not close run ${run.id}: ${serviceErrorOf(error).message ?? String(error)}; \`svc runs recover\` will`);
    exitCode = exitCode || exitCodeFor(error);
  } finally {
    await heartbeat.stop();
    await stream.stop();
    journal.close();
    c.local.lock.release();
  }
  return {
    ...summaryOf(selection, final ?? run, exitCode, note, legs),
    stopReason: final?.stopReason ?? stopReason,
    status: final?.status ?? status,
    closeOut,
  };
}
