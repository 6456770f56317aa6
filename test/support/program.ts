// The whole commander tree of `svc`, run in-process: the program src/commands/program.ts builds,
// a test context (in-memory streams, an environment of its own), commander's own output bound to
// the same streams, and errors ended by the entry's own reportError. What a spawned `bin/svc.js`
// shows on stdout, stderr and as its exit code, without a node start-up per check (about a second
// on a loaded machine). Arguments go through the real parser, so commands can move between files.
import type { Command } from 'commander';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { openConfig, type ConfigStore } from '../../src/commands/config/store.js';
import type { Context, GlobalOptions } from '../../src/commands/context.js';
import { buildProgram } from '../../src/commands/program.js';
import { reportError } from '../../src/report-error.js';
import { createOutput } from '../../src/ui/output.js';
import { BIN } from './cli.js';
import { MemoryStream } from './context.js';

export interface ProgramResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface ProgramOptions {
  /** The whole environment the command sees (nothing is read from process.env). */
  env?: Record<string, string | undefined>;
  stdin?: string;
  cwd?: string;
}

function bindOutput(cmd: Command, stdout: MemoryStream, stderr: MemoryStream): void {
  // commander copies its output settings into each subcommand when it is made: set them on all.
  cmd.configureOutput({ writeOut: (s) => stdout.write(s), writeErr: (s) => stderr.write(s) });
  for (const sub of cmd.commands) bindOutput(sub, stdout, stderr);
}

/** `svc ...argv` in-process: its stdout, stderr and exit code. */
export async function runProgram(argv: string[], opts: ProgramOptions = {}): Promise<ProgramResult> {
  // Streams that are no terminal, as behind a pipe (a spinner on a MemoryStream would need cursor
  // methods; test/tty/run-progress.test.ts has a stream with them).
  const stdout = new MemoryStream();
  const stderr = new MemoryStream();
  const env = { SVC_CONFIG_DIR: mkdtempSync(join(tmpdir(), 'svc-cfg-')), SVC_AGENT_USER: 'none', ...opts.env };
  const stdin = new PassThrough();
  stdin.end(opts.stdin ?? '');
  // Made once the globals are parsed, as the entry does (cli.ts `context`).
  let built: Context | undefined;
  const program = buildProgram('0.0.0-test', (cmd) => {
    if (built) return built;
    const globals = cmd.optsWithGlobals() as GlobalOptions;
    const abort = new AbortController();
    let config: ConfigStore | undefined;
    built = {
      stdin, stdout, stderr, env, cwd: opts.cwd ?? process.cwd(), globals,
      out: createOutput({ stdout, stderr, env, json: globals.json, color: globals.color, verbose: globals.verbose }),
      config: () => (config ??= openConfig(env)),
      interrupts: { signal: abort.signal, reason: () => null },
      exitCode: 0,
      self: { execPath: process.execPath, script: BIN },
      version: '0.0.0-test',
    };
    return built;
  });
  bindOutput(program, stdout, stderr);
  let code: number;
  try {
    await program.parseAsync(['node', 'svc', ...argv]);
    code = built?.exitCode ?? 0;
  } catch (error) {
    code = reportError(error, (text) => stderr.write(text), built?.globals.verbose);
  }
  return { code, stdout: stdout.text, stderr: stderr.text };
}
