// Runs the commander tree once and turns its end into an exit code: the command's own (a failed
// run), 130/143 after a signal, or, for any error, one line on stderr and the code of
// README.md#exit-codes. bin/svc.js (through cli.ts) and the in-process command tests go through this same function.
import type { Command } from 'commander';
import type { OutStream } from '../ui/output.js';
import type { Context } from './context.js';
import { errorLine } from './error-line.js';
import { exitCodeOf, isCommanderEnd } from './exit-codes.js';
import { visible } from '../ui/visible.js';

export interface ProgramIO {
  stderr: OutStream;
  /** The context the command ran with, once one was built (none for `--help` or a usage error). */
  context(): Context | undefined;
}

/** `from: 'node'` takes process.argv as it is (node, script, args...); `'user'` the args alone. */
export async function runProgram(program: Command, argv: readonly string[], io: ProgramIO, from: 'node' | 'user' = 'user'): Promise<number> {
  try {
    await program.parseAsync(argv, { from });
    const ctx = io.context();
    // `--jq` writes the document once jq has run; its error is the command's.
    await ctx?.out.settle();
    const signal = ctx?.interrupts.reason();
    return exitCodeOf(signal ? { signal } : { exitCode: ctx?.exitCode });
  } catch (error) {
    return report(error, io);
  }
}

function report(error: unknown, io: ProgramIO): number {
  // Help and version end "with an error" in commander's exitOverride; commander printed its own.
  if (isCommanderEnd(error)) return exitCodeOf({ error });
  // A message may quote the service (an error's text, a title): its control characters are shown.
  io.stderr.write(`svc: ${visible(errorLine(error, io.context()))}\n`);
  if (io.context()?.globals.verbose && error instanceof Error && error.stack && !isUserFacing(error)) {
    io.stderr.write(`${error.stack}\n`);
  }
  return exitCodeOf({ error });
}

function isUserFacing(error: unknown) {
  return typeof (error as { exitCode?: unknown }).exitCode === 'number' || typeof (error as { status?: unknown }).status === 'number';
}
