// How a run closes (docs/dispatch.md): its stop reason and the status sent with it, from what happened;
// and the exit code it ends with (README.md#exit-codes). Pure, so every row is checked without running anything.
import { EXIT, exitCodeFor } from '../../api/errors.js';
import type { CloseStatus, DispatchCommand, StopReason } from '../../contract/types.js';
import { interruptionExitCode } from '../signals.js';

export interface CloseState {
  /** The command whose semantics the legs followed (`continue` runs as the original). */
  command: DispatchCommand;
  /** batch: the cap cut the ready set; auto: this run took what was left of `--max`. */
  capped: boolean;
  /** auto: whether more is ready beyond what the invocation took; undefined when not asked. */
  moreReady?: boolean;
  /** The whole-run `--timeout` ran out. */
  timedOut: boolean;
  /** SIGINT/SIGTERM (not the timeout, not a close by the service). */
  interrupted: boolean;
  /** A fault stopped the run: the service past every retry, or the state folder. */
  failed: boolean;
  /** What stopped the legs early (gated, replanned, halted, max), or null when they ran out. */
  stop: StopReason | null;
  /** Legs that ended failed. */
  failedLegs: number;
}

export interface CloseDecision {
  stopReason: StopReason;
  status: CloseStatus;
}

/** Only a run whose legs ran out closes with its command's own stop (auto asks the service then). */
export function endedByCommand(s: Pick<CloseState, 'timedOut' | 'interrupted' | 'failed' | 'stop'>): boolean {
  return !s.timedOut && !s.interrupted && !s.failed && s.stop === null;
}

/** docs/dispatch.md, "Why a run stops": the stop of a run whose legs all ran. */
function commandStop(s: Pick<CloseState, 'command' | 'capped' | 'moreReady'>): StopReason {
  if (s.command === 'batch') return s.capped ? 'max' : 'drained';
  if (s.command === 'auto') {
    // Without the answer (a continued or hosted auto run) nothing says more is ready.
    if (s.moreReady === false) return 'drained';
    return s.capped ? 'max' : s.moreReady ? 'completed' : 'drained';
  }
  return 'completed';
}

export function decideClose(s: CloseState): CloseDecision {
  if (s.timedOut) return { stopReason: 'interrupted', status: 'timed_out' };
  if (s.interrupted) return { stopReason: 'interrupted', status: 'cancelled' };
  if (s.failed) return { stopReason: 'halted', status: 'failed' };
  const stopReason = s.stop ?? commandStop(s);
  return { stopReason, status: stopReason === 'halted' || s.failedLegs > 0 ? 'failed' : 'succeeded' };
}

/** How a run ended, as its exit code sees it. */
export interface RunEnd {
  /** The close status decided (or, for a run found closed, the service's); null: never opened. */
  status: CloseStatus | string | null;
  timedOut?: boolean;
  /** The user's signal stopped it: the signal's abort reason (an `Interrupted` names the signal). */
  interrupted?: { reason: unknown };
  /** The fault that stopped it: the service past every retry, the state folder. */
  failure?: unknown;
}

/**
 * The one place a run's end becomes its exit code (README.md#exit-codes): 1 when it timed out, 130/143 when
 * a signal stopped it, a fault's own code, else 1 for a failed run and 0 for any other.
 */
export function runExitCode(end: RunEnd): number {
  if (end.timedOut) return EXIT.failed;
  if (end.interrupted) return interruptionExitCode(end.interrupted.reason) ?? EXIT.sigint;
  const code = end.failure ? exitCodeFor(end.failure) : EXIT.ok;
  return code === EXIT.ok && end.status === 'failed' ? EXIT.failed : code;
}
