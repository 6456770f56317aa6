// One workflow step (setup, verify, teardown): a shell command as the leg's user in the leg's
// folder, in a process group of its own that svc tracks like an agent's (a second Ctrl-C and
// `svc runs recover` kill it), with a time limit. Its output goes to the caller (the leg's log);
// when the command exits, whatever it left running in its group goes with it.
import { spawn } from 'node:child_process';
import { trackAgentGroup } from '../signals.js';

/** How long stdout/stderr may stay open after the command exited (a background child holding them). */
const DRAIN_AFTER_EXIT_MS = 1_000;

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

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // Gone already.
  }
}

/** Runs one step to its end. Never rejects. */
export function runStep(spec: StepSpec): Promise<StepResult> {
  const started = Date.now();
  return new Promise((resolve) => {
    let stopped: StepResult['stopped'] = null;
    let settled = false;
    const timers: NodeJS.Timeout[] = [];
    let untrack: (() => void) | null = null;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
    const open = { stdout: true, stderr: true };
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn('sh', ['-c', spec.command], {
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
      // Whatever the step left running in its group (a server sent to the background) ends with it.
      if (exit && pid !== undefined) signalGroup(pid, 'SIGKILL');
      if (untrack && pid !== undefined) {
        untrack();
        spec.onGroup?.('end', pid);
      }
      resolve({ ...result, stopped, durationMs: Date.now() - started });
    };
    const stop = (why: 'timeout' | 'interrupted') => {
      if (stopped || exit || pid === undefined) return;
      stopped = why;
      signalGroup(pid, 'SIGTERM');
      timers.push(setTimeout(() => signalGroup(pid, 'SIGKILL'), spec.killGraceMs));
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
    for (const name of ['stdout', 'stderr'] as const) {
      const stream = child[name]!;
      stream.on('data', (chunk: Buffer) => {
        try {
          spec.onOutput(chunk);
        } catch {
          // A log that cannot be written must not stop the step.
        }
      });
      stream.on('error', () => {});
      stream.on('close', () => {
        open[name] = false;
        if (!open.stdout && !open.stderr) conclude();
      });
    }
    child.on('exit', (code, signal) => {
      exit = { code, signal };
      if (pid === undefined) return conclude();
      if (!open.stdout && !open.stderr) {
        signalGroup(pid, 'SIGKILL');
        return conclude();
      }
      // A background child (a dev server) still holds the pipes: it goes with its step.
      timers.push(setTimeout(() => {
        signalGroup(pid, 'SIGKILL');
        child.stdout?.destroy();
        child.stderr?.destroy();
        conclude();
      }, DRAIN_AFTER_EXIT_MS));
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
