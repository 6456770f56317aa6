// A program svc runs in a process group of its own (an agent, a workflow step), followed to its
// end: its output as it comes, its leader's exit, and then the end of the whole group. When the
// leader exits, whatever it left running in its group (a dev server sent to the background, a
// grandchild still holding the pipes) goes with it, so nothing outlives the program's turn.
import type { ChildProcess } from 'node:child_process';

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
