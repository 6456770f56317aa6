// Runs one agent over one card: its prompt written or piped, its program run in a process group of
// its own (process/run-in-group.ts), its stream parsed, and how the leg ended decided.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { runInGroup } from '../process/run-in-group.js';
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
 * Run the agent detached in its own process group (process/run-in-group.ts), deliver the prompt,
 * watch for idle and card timeouts and the abort signal, and report how the leg ended. Never
 * rejects for anything the agent does; only a prompt file that cannot be written rejects (a
 * broken state dir, not a leg).
 */
export async function runAgentProcess(spec: LegSpec): Promise<LegResult> {
  const started = Date.now();
  const command = spec.argv[0];
  if (!command) throw new TypeError('runAgentProcess: argv is empty');
  writePromptFile(spec);
  if (spec.signal?.aborted) {
    return { exitCode: null, signal: null, outcome: 'failed', reason: 'interrupted', durationMs: Date.now() - started };
  }
  const r = await runInGroup({
    argv: spec.argv,
    cwd: spec.cwd,
    env: spec.env,
    user: spec.user,
    // Always a pipe, closed at once when the prompt goes another way.
    stdin: spec.promptVia === 'stdin' ? spec.prompt : '',
    extraFds: spec.extraFds,
    killGraceMs: spec.killGraceMs,
    deadlines: [{ ms: spec.cardTimeoutMs, why: 'card timeout' satisfies Stop }],
    idle: { ms: spec.idleTimeoutMs, why: 'idle timeout' satisfies Stop },
    signal: spec.signal,
    // The parser reads stdout first; the output itself goes straight to the leg's log, no step of
    // this module between (docs/dispatch.md#the-pipe).
    ...(spec.parser ? { onStdout: (chunk: Buffer) => spec.parser!.push(chunk) } : {}),
    onOutput: spec.onOutput,
    onGroup: spec.onGroup,
    onHandle: spec.onHandle,
  });
  const durationMs = Date.now() - started;
  if (r.startError) return { signal: null, ...notStarted(command, r.startError), outcome: 'failed', durationMs };
  spec.parser?.end();
  const usage = spec.parser?.usage() ?? {};
  const base = { exitCode: r.code, signal: r.signal ?? null, ...usage, ...(spec.parser ? { finalMessage: spec.parser.finalMessage() } : {}), durationMs };
  if (r.stopped) return { ...base, outcome: 'failed', reason: r.stopped };
  // The stream's terminal event decides over the exit code (docs/agents.md).
  const verdict = spec.parser?.verdict();
  if (verdict) return { ...base, outcome: verdict.outcome, reason: verdict.reason };
  if (r.code === 0) return { ...base, outcome: 'succeeded', reason: null };
  return { ...base, outcome: 'failed', reason: r.code !== null ? `exit ${r.code}` : `killed by ${r.signal ?? 'signal'}` };
}

/** An agent that could not be started, as the shell says it: 127 not found, 126 not executable. */
function notStarted(command: string, error: NodeJS.ErrnoException): { exitCode: number | null; reason: string } {
  if (error.code === 'ENOENT') return { exitCode: 127, reason: `agent not found: ${command}` };
  if (error.code === 'EACCES') return { exitCode: 126, reason: `agent not executable: ${command}` };
  return { exitCode: null, reason: `agent could not start: ${error.message}` };
}
