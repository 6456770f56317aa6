// Runs one agent over one card. node:child_process rather than execa: execa's promise settles only
// when stdout/stderr end, and a grandchild that inherited them (a dev server, a stuck test) can
// hold them open for ever; here the leader's `exit` ends the leg, stragglers of its process group
// are stopped, and the group kill on timeouts stays in one place.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { trackAgentGroup } from '../signals.js';
import { followGroup, terminateGroup, type GroupExit } from './process-group.js';
import type { LegResult, LegSpec } from './types.js';

type Stop = 'idle timeout' | 'card timeout' | 'interrupted';

/**
 * Synchronous: a prompt is a few KiB, and the four thread-pool round trips of the promise API
 * (mkdir, open, write, close) took longer than the writing itself on every card of a busy machine.
 * The folder is made only when it is missing (the run folder already holds `prompts/`).
 */
function writePromptFile(spec: LegSpec): void {
  // An agent user's leg wrote its prompt before the hand-over: root writes nothing there now.
  if (spec.promptWritten) return;
  // 0600: the prompt may quote private issue text.
  try {
    writeFileSync(spec.promptFile, spec.prompt, { mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    mkdirSync(dirname(spec.promptFile), { recursive: true });
    writeFileSync(spec.promptFile, spec.prompt, { mode: 0o600 });
  }
}

/**
 * Run the agent detached in its own process group, deliver the prompt, watch for idle and card
 * timeouts and the abort signal, and report how the leg ended. Never rejects for anything the
 * agent does; only a prompt file that cannot be written rejects (a broken state dir, not a leg).
 */
export async function runAgentProcess(spec: LegSpec): Promise<LegResult> {
  const started = Date.now();
  const [command, ...args] = spec.argv;
  if (!command) throw new TypeError('runAgentProcess: argv is empty');
  writePromptFile(spec);
  if (spec.signal?.aborted) {
    return { exitCode: null, signal: null, outcome: 'failed', reason: 'interrupted', durationMs: Date.now() - started };
  }

  return new Promise<LegResult>((resolve) => {
    let child: ChildProcess;
    let stop: Stop | null = null;
    let settled = false;
    let lastOutput = Date.now();
    const timers: NodeJS.Timeout[] = [];
    let killTimer: NodeJS.Timeout | undefined;
    let exit: GroupExit | null = null;

    let untrack: (() => void) | null = null;
    const finish = (result: Omit<LegResult, 'durationMs'>): void => {
      if (settled) return;
      settled = true;
      if (untrack) {
        untrack();
        if (child?.pid !== undefined) notifyGroup('end', child.pid);
      }
      for (const t of timers) clearTimeout(t);
      spec.signal?.removeEventListener('abort', onAbort);
      resolve({ ...result, durationMs: Date.now() - started });
    };

    /** SIGTERM to the whole group now, SIGKILL after the grace period if anything is left. */
    const terminate = (reason: Stop): void => {
      if (stop || exit || child.pid === undefined) return;
      stop = reason;
      killTimer = terminateGroup(child.pid, spec.killGraceMs);
    };

    const onAbort = (): void => terminate('interrupted');
    const notifyGroup = (event: 'start' | 'end', pid: number): void => {
      try {
        spec.onGroup?.(event, pid);
      } catch {
        // A journal that cannot be written (disk full) must not stop the leg.
      }
    };

    const conclude = (): void => {
      if (!exit) return;
      spec.parser?.end();
      const { code, signal } = exit;
      const usage = spec.parser?.usage() ?? {};
      const base = { exitCode: code, signal: signal ?? null, ...usage, ...(spec.parser ? { finalMessage: spec.parser.finalMessage() } : {}) };
      if (stop) return finish({ ...base, outcome: 'failed', reason: stop });
      // The stream's terminal event decides over the exit code (DISPATCH.md §3).
      const verdict = spec.parser?.verdict();
      if (verdict) return finish({ ...base, outcome: verdict.outcome, reason: verdict.reason });
      if (code === 0) return finish({ ...base, outcome: 'succeeded', reason: null });
      finish({ ...base, outcome: 'failed', reason: code !== null ? `exit ${code}` : `killed by ${signal ?? 'signal'}` });
    };

    try {
      child = spawn(command, args, {
        cwd: spec.cwd,
        // PWD as a shell would set it: agents built on Bun (opencode) take their project folder
        // from PWD, and svc's own PWD would point them at the directory svc was started in.
        env: { ...spec.env, PWD: spec.cwd },
        detached: true,
        // libuv also clears the supplementary groups when it switches uid/gid.
        ...(spec.user ? { uid: spec.user.uid, gid: spec.user.gid } : {}),
        stdio: ['pipe', 'pipe', 'pipe', ...(spec.extraFds ?? [])],
        windowsHide: true,
      });
    } catch (error) {
      // spawn throws synchronously only for invalid arguments (e.g. a NUL byte in argv).
      finish({ exitCode: null, signal: null, outcome: 'failed', reason: `agent could not start: ${(error as Error).message}` });
      return;
    }

    if (child.pid !== undefined) {
      untrack = trackAgentGroup(child.pid);
      notifyGroup('start', child.pid);
    }

    child.on('error', (error: NodeJS.ErrnoException) => {
      // Emitted instead of `exit` when the program could not be started at all.
      if (exit) return;
      if (error.code === 'ENOENT') finish({ exitCode: 127, signal: null, outcome: 'failed', reason: `agent not found: ${command}` });
      else if (error.code === 'EACCES') finish({ exitCode: 126, signal: null, outcome: 'failed', reason: `agent not executable: ${command}` });
      else finish({ exitCode: null, signal: null, outcome: 'failed', reason: `agent could not start: ${error.message}` });
    });

    // The agent may exit without reading its stdin: EPIPE there is expected, not a failure.
    child.stdin?.on('error', () => {});
    if (spec.promptVia === 'stdin') child.stdin?.end(spec.prompt);
    else child.stdin?.end();

    // A log that cannot be written (disk full) must not crash the CLI with agents still running:
    // followGroup swallows the throw, the leg goes on, and its outcome is still decided and reported.
    followGroup(child, {
      onOutput: (chunk, name) => {
        lastOutput = Date.now();
        if (name === 'stdout') spec.parser?.push(chunk);
        spec.onOutput(chunk, name);
      },
      onExit: (exited) => {
        exit = exited;
        if (killTimer) clearTimeout(killTimer);
      },
      onEnd: conclude,
    });

    if (spec.signal) spec.signal.addEventListener('abort', onAbort, { once: true });

    const watchIdle = (): void => {
      const quiet = Date.now() - lastOutput;
      if (quiet >= spec.idleTimeoutMs) return terminate('idle timeout');
      timers.push(setTimeout(watchIdle, spec.idleTimeoutMs - quiet));
    };
    timers.push(setTimeout(watchIdle, spec.idleTimeoutMs));
    timers.push(setTimeout(() => terminate('card timeout'), spec.cardTimeoutMs));
  });
}
