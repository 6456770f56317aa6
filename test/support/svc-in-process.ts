// The whole command line in-process: the real commander tree (src/commands/program.ts) parses the
// arguments and runs the real handler with a test context (in-memory streams whose TTY flag can be
// switched, the given environment and folder), and the same runProgram as bin/svc.js maps the end
// to an exit code and one stderr line. Nothing is spawned, so a flag, output or --json check costs
// milliseconds instead of a node start-up. What only a real process shows (start-up, signals, a
// closed pipe) stays in the spawned tests of test/support/cli.ts.
import type { Command } from 'commander';
import type { Context, GlobalOptions } from '../../src/commands/context.js';
import { buildProgram } from '../../src/commands/program.js';
import { runProgram } from '../../src/commands/run-program.js';
import { isolatedEnv, type CliEnv, type CliResult } from './cli.js';
import { MemoryStream, testContext, type TestContext } from './context.js';

export interface InProcessOptions {
  /** The whole environment, as a spawned svc would get it (default: a fresh isolatedEnv()). */
  env?: CliEnv;
  cwd?: string;
  /** What the command reads on stdin. */
  input?: string;
  /** stdout and stderr claim to be a terminal. */
  tty?: boolean;
}

export interface InProcessRun {
  /** The streams as they fill, for a test that watches a command still running. */
  stdout: MemoryStream;
  stderr: MemoryStream;
  /** The context, once the command built it (an abort here is a Ctrl-C). */
  context(): TestContext | undefined;
  done: Promise<CliResult>;
}

/** Starts `svc ARGS` in this process; `done` resolves with what a spawned svc would have given. */
export function startSvc(args: string[], opts: InProcessOptions = {}): InProcessRun {
  const stdout = new MemoryStream(opts.tty);
  const stderr = new MemoryStream(opts.tty);
  let built: TestContext | undefined;
  const context = (cmd: Command): Context => {
    // Built once, when the command runs, from the global flags it was given (as cli.ts does).
    built ??= testContext({
      env: opts.env ?? isolatedEnv(),
      exactEnv: true,
      globals: cmd.optsWithGlobals() as GlobalOptions,
      tty: opts.tty,
      stdin: opts.input ?? '',
      cwd: opts.cwd,
      streams: { stdout, stderr },
    });
    return built;
  };
  const program = buildProgram('0.0.0-test', context, { stdout, stderr });
  const done = runProgram(program, args, { stderr, context: () => built }).then((code) => ({ code, signal: null, stdout: stdout.text, stderr: stderr.text }));
  return { stdout, stderr, context: () => built, done };
}

/** `svc ARGS` in this process, to its end. */
export function svcInProcess(args: string[], opts: InProcessOptions = {}): Promise<CliResult> {
  return startSvc(args, opts).done;
}
