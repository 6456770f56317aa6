// One workflow step (setup, verify, teardown): a shell command as the leg's user in the leg's
// folder, in a process group of its own that svc tracks like an agent's (process/run-in-group.ts:
// a second Ctrl-C and `svc runs recover` kill it), with a time limit. Its output goes to the caller (the leg's log);
// when the command exits, whatever it left running in its group goes with it.
import { runInGroup, type WrappedArgv } from '../process/run-in-group.js';

export interface StepSpec {
  /** Run with `sh -c`: the repository's own policy, written as in a CI file. */
  command: string;
  cwd: string;
  /** The complete environment (the agent's, without svc's credentials). */
  env: Record<string, string>;
  /** The leg's user; absent: svc's own. */
  user?: { uid: number; gid: number } | null;
  timeoutMs: number;
  killGraceMs: number;
  /** Aborted when the run stops its legs: the step is stopped like an agent. */
  signal?: AbortSignal;
  onOutput(chunk: Buffer): void;
  /** Hears the step's process group start and end (the journal names it for `svc runs recover`). */
  onGroup?(event: 'start' | 'end', pgid: number): void;
  /** A normal user's network fence: the shell's argv, in a namespace of its own (fence/bwrap.ts). */
  wrap?(argv: readonly string[]): WrappedArgv;
}

export interface StepResult {
  /** null when a signal ended it (or it never started). */
  exitCode: number | null;
  signal: string | null;
  /** Why svc stopped it, if it did. */
  stopped: 'timeout' | 'interrupted' | null;
  /** Set when the shell could not be started at all. */
  error: string | null;
  durationMs: number;
}

/** Runs one step to its end. Never rejects. */
export async function runStep(spec: StepSpec): Promise<StepResult> {
  const shell = ['sh', '-c', spec.command];
  const wrapped = spec.wrap ? spec.wrap(shell) : { argv: shell };
  const r = await runInGroup({
    argv: wrapped.argv,
    onHandle: wrapped.onHandle,
    cwd: spec.cwd,
    env: spec.env,
    user: spec.user,
    killGraceMs: spec.killGraceMs,
    deadlines: [{ ms: spec.timeoutMs, why: 'timeout' }],
    signal: spec.signal,
    onOutput: (chunk) => spec.onOutput(chunk),
    onGroup: spec.onGroup,
  });
  return {
    exitCode: r.code,
    signal: r.signal,
    stopped: r.stopped as StepResult['stopped'],
    error: r.startError ? `could not start sh: ${r.startError.message}` : null,
    durationMs: r.durationMs,
  };
}

/** How a step ended, as a reason says it: `exit 1`, `timed out after 10m`, `killed by SIGKILL`. */
export function stepOutcome(result: StepResult, timeoutLabel: string): string {
  if (result.error) return result.error;
  if (result.stopped === 'timeout') return `timed out after ${timeoutLabel}`;
  if (result.stopped === 'interrupted') return 'interrupted';
  return result.exitCode !== null ? `exit ${result.exitCode}` : `killed by ${result.signal ?? 'a signal'}`;
}
