// One context built in main and handed to every command: streams with their TTY facts, the
// environment, the stored config, the output object, and the interruption signal. Commands never
// touch `process` themselves, so tests run them in-process with in-memory streams.
import type { Readable } from 'node:stream';
import type { Output, OutStream } from '../ui/output.js';
import type { ConfigStore } from './config/store.js';
import type { GlobalFlags } from './global-flags.js';

/** The options every command takes (`--jq EXPR` implies --json), as global-flags.ts declares them. */
export type GlobalOptions = GlobalFlags;

/**
 * How much of a command group a register function builds: 'top' is its top-level command alone
 * (name, arguments, description, and flags enough for the `[options]` the root help shows: all of
 * them, or for a dispatch command one), 'whole' adds its subcommands and every flag.
 */
export type Depth = 'top' | 'whole';

/** Which signal interrupted the command, once one did. */
export interface Interrupts {
  signal: AbortSignal;
  reason(): 'SIGINT' | 'SIGTERM' | null;
  /**
   * Called by a command whose work a signal must wind down rather than cut (a dispatch run, the
   * local server). Without it, SIGINT/SIGTERM exit at once with 130/143.
   */
  handle?(mode: 'graceful' | 'dispatch'): void;
}

export interface Context {
  stdin: Readable & { isTTY?: boolean };
  stdout: OutStream;
  stderr: OutStream;
  env: Record<string, string | undefined>;
  cwd: string;
  out: Output;
  globals: GlobalOptions;
  config(): ConfigStore;
  interrupts: Interrupts;
  /** Set by a command that ends without throwing but must not exit 0 (a failed run). */
  exitCode: number;
  /** How to start svc again (git's credential helper, the demo agent): this node and this script. */
  self: { execPath: string; script: string };
  /** The version of svc, for User-Agent and `--version`. */
  version: string;
}
