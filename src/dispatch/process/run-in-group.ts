// The one way svc runs a program of a leg (an agent, a workflow step): detached in a process group
// of its own, as the leg's user, tracked like an agent's (a second Ctrl-C and `svc runs recover`
// kill it), its output handed over as it comes, stopped (the whole group: SIGTERM, then SIGKILL
// after the grace) on a deadline, on silence or on the abort signal. node:child_process rather
// than execa: execa's promise settles only when stdout/stderr end, and a grandchild that inherited
// them (a dev server, a stuck test) can hold them open for ever; here the leader's exit ends the
// program's turn and followGroup ends what it left running.
import { spawn, type ChildProcess } from 'node:child_process';
import { trackAgentGroup } from '../signals.js';

// The group: its output as it comes, its leader's exit, and then the end of the whole group.
// When the leader exits, whatever it left running in its group (a dev server sent to the background,
// a grandchild still holding the pipes) goes with it, so nothing outlives the program's turn.
/** How long stdout/stderr may stay open after the leader exited before the group is ended anyway. */
const DRAIN_AFTER_EXIT_MS = 1_000;

/** How the group's leader exited. */
export interface GroupExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** Signals a process group, ignoring a group that is already gone. Returns whether it existed. */
export function signalGroup(pid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false;
  }
}

/** SIGTERM to the group now, SIGKILL after `graceMs` if anything is left: the timer of the SIGKILL. */
export function terminateGroup(pid: number, graceMs: number): NodeJS.Timeout {
  signalGroup(pid, 'SIGTERM');
  return setTimeout(() => signalGroup(pid, 'SIGKILL'), graceMs);
}

export interface GroupHooks {
  /** Each chunk of stdout or stderr; a throw is swallowed (a log that cannot be written must not stop the program). */
  onOutput(chunk: Buffer, name: 'stdout' | 'stderr'): void;
  /** The leader exited (its pipes may still be open). */
  onExit?(exit: GroupExit): void;
  /** Once: the leader exited and its pipes closed (or were cut), and the group got SIGKILL. */
  onEnd(exit: GroupExit): void;
}

/**
 * Follows a child spawned `detached` (the leader of its own group) with stdout and stderr piped.
 * Pipes still held DRAIN_AFTER_EXIT_MS after the leader's exit are cut.
 */
export function followGroup(child: ChildProcess, hooks: GroupHooks): void {
  const pid = child.pid;
  const open = { stdout: true, stderr: true };
  let exit: GroupExit | null = null;
  let drain: NodeJS.Timeout | undefined;
  let ended = false;
  const end = (): void => {
    if (ended || !exit) return;
    ended = true;
    if (drain) clearTimeout(drain);
    if (pid !== undefined) signalGroup(pid, 'SIGKILL');
    hooks.onEnd(exit);
  };
  for (const name of ['stdout', 'stderr'] as const) {
    const stream = child[name];
    if (!stream) continue;
    stream.on('data', (chunk: Buffer) => {
      try {
        hooks.onOutput(chunk, name);
      } catch {
        // The program goes on; its outcome is still decided and reported.
      }
    });
    stream.on('error', () => {});
    stream.on('close', () => {
      open[name] = false;
      if (!open.stdout && !open.stderr) end();
    });
  }
  child.on('exit', (code, signal) => {
    exit = { code, signal };
    hooks.onExit?.(exit);
    if (!open.stdout && !open.stderr) return end();
    // Something in the group still holds stdout/stderr: a moment to flush, then the group ends.
    drain = setTimeout(() => {
      child.stdout?.destroy();
      child.stderr?.destroy();
      end();
    }, DRAIN_AFTER_EXIT_MS);
  });
}

// The run: one program of a leg, from spawn to the end of its group.

/**
 * The first message over the channel brings the handle; the channel is closed then (or when the
 * program never sends), so nothing the program starts later can talk to svc through it.
 */
function takeHandle(child: ChildProcess, onHandle: (handle: unknown) => void): void {
  child.once('message', (_message, handle) => {
    if (child.connected) child.disconnect();
    if (handle !== undefined) onHandle(handle);
  });
}

export interface GroupRunSpec {
  argv: readonly string[];
  cwd: string;
  /** The complete environment; PWD is set to `cwd` as a shell would. */
  env: Record<string, string>;
  /** The leg's user; absent: svc's own. libuv also clears the supplementary groups when it switches. */
  user?: { uid: number; gid: number } | null | undefined;
  /** Written to stdin, which is then closed; absent: stdin is /dev/null. */
  stdin?: string | undefined;
  /** Descriptors 3 and up of the child (an agent user's leg folder). */
  extraFds?: readonly number[] | undefined;
  killGraceMs: number;
  /** Stop reasons after a time: the first to come stops the program. */
  deadlines: readonly { ms: number; why: string }[];
  /** Stopped with `why` after `ms` with no output at all. */
  idle?: { ms: number; why: string } | undefined;
  signal?: AbortSignal | undefined;
  onOutput(chunk: Buffer, from: 'stdout' | 'stderr'): void;
  /** Sees each stdout chunk first (an agent's stream parser): a tap beside the output's way to the log, not a step of it. */
  onStdout?: ((chunk: Buffer) => void) | undefined;
  /** Hears the group start and end (the journal names it for `svc runs recover`); a throw is ignored. */
  onGroup?: ((event: 'start' | 'end', pgid: number) => void) | undefined;
  /** Hears the one handle the program sends over node's IPC channel (WrappedArgv), which then closes. */
  onHandle?: ((handle: unknown) => void) | undefined;
}

/**
 * A program's argv as a wrapper wants it run, and what it hands back: a normal user's fence sends
 * the listening socket it made inside the program's namespace (fence/bwrap.ts), so that svc's proxy
 * accepts the program's connections itself, with no relay between.
 */
export interface WrappedArgv {
  argv: string[];
  onHandle?: ((handle: unknown) => void) | undefined;
}

export interface GroupRunResult {
  /** null when a signal ended it, or it never started. */
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Why svc stopped it ('interrupted' for the abort signal), or null. */
  stopped: string | null;
  /** It could not be started: spawn's error (ENOENT, EACCES, a NUL byte in argv). */
  startError: NodeJS.ErrnoException | null;
  durationMs: number;
}

/** Runs the program to the end of its group. Never rejects. */
export function runInGroup(spec: GroupRunSpec): Promise<GroupRunResult> {
  const started = Date.now();
  const [file, ...args] = spec.argv;
  return new Promise((resolve) => {
    let child: ChildProcess;
    let stopped: string | null = null;
    let exited = false;
    let settled = false;
    let lastOutput = Date.now();
    const timers: NodeJS.Timeout[] = [];
    let killTimer: NodeJS.Timeout | undefined;
    let untrack: (() => void) | null = null;
    const notify = (event: 'start' | 'end', pid: number) => {
      try {
        spec.onGroup?.(event, pid);
      } catch {
        // A journal that cannot be written (disk full) must not stop the program.
      }
    };
    const finish = (r: Omit<GroupRunResult, 'durationMs' | 'stopped'>) => {
      if (settled) return;
      settled = true;
      for (const t of timers) clearTimeout(t);
      spec.signal?.removeEventListener('abort', onAbort);
      if (untrack && child.pid !== undefined) {
        untrack();
        notify('end', child.pid);
      }
      resolve({ ...r, stopped, durationMs: Date.now() - started });
    };
    const stop = (why: string) => {
      if (stopped || exited || child?.pid === undefined) return;
      stopped = why;
      killTimer = terminateGroup(child.pid, spec.killGraceMs);
    };
    const onAbort = () => stop('interrupted');
    try {
      child = spawn(file ?? '', args, {
        cwd: spec.cwd,
        // Agents built on Bun (opencode) take their project folder from PWD, not from the cwd.
        env: { ...spec.env, PWD: spec.cwd },
        detached: true,
        ...(spec.user ? { uid: spec.user.uid, gid: spec.user.gid } : {}),
        stdio: [spec.stdin !== undefined ? 'pipe' : 'ignore', 'pipe', 'pipe', ...(spec.extraFds ?? []), ...(spec.onHandle ? (['ipc'] as const) : [])],
        windowsHide: true,
      });
    } catch (error) {
      // Synchronous only for arguments spawn cannot take (a NUL byte in argv).
      resolve({ code: null, signal: null, stopped: null, startError: error as NodeJS.ErrnoException, durationMs: 0 });
      return;
    }
    if (child.pid !== undefined) {
      untrack = trackAgentGroup(child.pid);
      notify('start', child.pid);
    }
    if (spec.onHandle) takeHandle(child, spec.onHandle);
    // Emitted instead of `exit` when the program could not be started at all.
    child.on('error', (error: NodeJS.ErrnoException) => {
      if (!exited) finish({ code: null, signal: null, startError: error });
    });
    if (spec.stdin !== undefined) {
      // The program may exit without reading its stdin: EPIPE there is expected, not a failure.
      child.stdin?.on('error', () => {});
      child.stdin?.end(spec.stdin);
    }
    // A log that cannot be written must not stop the program (followGroup swallows the throw).
    followGroup(child, {
      onOutput: (chunk, from) => {
        lastOutput = Date.now();
        if (from === 'stdout') spec.onStdout?.(chunk);
        spec.onOutput(chunk, from);
      },
      onExit: () => {
        exited = true;
        if (killTimer) clearTimeout(killTimer);
      },
      onEnd: (exit) => finish({ code: exit.code, signal: exit.signal, startError: null }),
    });
    if (spec.signal?.aborted) onAbort();
    else spec.signal?.addEventListener('abort', onAbort, { once: true });
    for (const d of spec.deadlines) timers.push(setTimeout(() => stop(d.why), d.ms));
    const idle = spec.idle;
    if (idle) {
      const watch = (): void => {
        const quiet = Date.now() - lastOutput;
        if (quiet >= idle.ms) return stop(idle.why);
        timers.push(setTimeout(watch, idle.ms - quiet));
      };
      timers.push(setTimeout(watch, idle.ms));
    }
  });
}
