// One workflow step (setup, verify, teardown): a shell command as the leg's user in the leg's
// folder, in a process group of its own that svc tracks like an agent's (a second Ctrl-C and
// `svc runs recover` kill it), with a time limit. Its output goes to the caller (the leg's log);
// when the command exits, whatever it left running in its group goes with it.
import { spawn } from 'node:child_process';
import { followGroup, terminateGroup, type GroupExit } from '../agent/process-group.js';
import { trackAgentGroup } from '../signals.js';

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
  wrap?(argv: readonly string[]): string[];
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
export function runStep(spec: StepSpec): Promise<StepResult> {
  const started = Date.now();
  return new Promise((resolve) => {
    let stopped: StepResult['stopped'] = null;
    let settled = false;
    const timers: NodeJS.Timeout[] = [];
    let untrack: (() => void) | null = null;
    let exit: GroupExit | null = null;
    let child: ReturnType<typeof spawn>;
    try {
      const [file, ...args] = spec.wrap ? spec.wrap(['sh', '-c', spec.command]) : ['sh', '-c', spec.command];
      child = spawn(file!, args, {
        cwd: spec.cwd,
        env: { ...spec.env, PWD: spec.cwd },
        detached: true,
        ...(spec.user ? { uid: spec.user.uid, gid: spec.user.gid } : {}),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    } catch (error) {
      // Synchronous only for arguments spawn cannot take (a NUL byte in the command).
      resolve({ exitCode: null, signal: null, stopped: null, error: `could not start sh: ${(error as Error).message}`, durationMs: 0 });
      return;
    }
    const pid = child.pid;
    const finish = (result: Omit<StepResult, 'durationMs' | 'stopped'>) => {
      if (settled) return;
      settled = true;
      for (const t of timers) clearTimeout(t);
      spec.signal?.removeEventListener('abort', onAbort);
      if (untrack && pid !== undefined) {
        untrack();
        spec.onGroup?.('end', pid);
      }
      resolve({ ...result, stopped, durationMs: Date.now() - started });
    };
    const stop = (why: 'timeout' | 'interrupted') => {
      if (stopped || exit || pid === undefined) return;
      stopped = why;
      timers.push(terminateGroup(pid, spec.killGraceMs));
    };
    const onAbort = () => stop('interrupted');
    const conclude = () => {
      if (exit) finish({ exitCode: exit.code, signal: exit.signal, error: null });
    };
    if (pid !== undefined) {
      untrack = trackAgentGroup(pid);
      spec.onGroup?.('start', pid);
    }
    child.on('error', (error) => {
      if (!exit) finish({ exitCode: null, signal: null, error: `could not start sh: ${error.message}` });
    });
    // A log that cannot be written must not stop the step (followGroup swallows the throw); a
    // background child (a dev server) still holding the pipes goes with its step.
    followGroup(child, {
      onOutput: (chunk) => spec.onOutput(chunk),
      onExit: (exited) => {
        exit = exited;
      },
      onEnd: conclude,
    });
    if (spec.signal?.aborted) onAbort();
    else spec.signal?.addEventListener('abort', onAbort, { once: true });
    timers.push(setTimeout(() => stop('timeout'), spec.timeoutMs));
  });
}

/** How a step ended, as a reason says it: `exit 1`, `timed out after 10m`, `killed by SIGKILL`. */
export function stepOutcome(result: StepResult, timeoutLabel: string): string {
  if (result.error) return result.error;
  if (result.stopped === 'timeout') return `timed out after ${timeoutLabel}`;
  if (result.stopped === 'interrupted') return 'interrupted';
  return result.exitCode !== null ? `exit ${result.exitCode}` : `killed by ${result.signal ?? 'a signal'}`;
}
