// How an error that reached the top ends: one line on stderr and the exit code of DISPATCH.md §2.
// Its own module so the entry (cli.ts) and an in-process run of the command tree end the same way.
import { EXIT, exitCodeOf } from './commands/exit-codes.js';

/** Writes the error's one line (a stack only under --verbose, for an unexpected error) and returns the exit code. */
export function reportError(error: unknown, write: (text: string) => void, verbose = false): number {
  const e = error as { code?: string; exitCode?: number; message?: string };
  if (typeof e.code === 'string' && e.code.startsWith('commander.')) {
    // Help and version end "with an error" in commander's exitOverride; they are successes.
    if (e.exitCode === 0 || e.code === 'commander.helpDisplayed' || e.code === 'commander.version') return EXIT.ok;
    return EXIT.usage;
  }
  const message = (e.message ?? String(error)).split('\n')[0];
  write(`svc: ${message}\n`);
  if (verbose && error instanceof Error && error.stack && !isUserFacing(error)) write(`${error.stack}\n`);
  return exitCodeOf(error);
}

function isUserFacing(error: unknown) {
  return typeof (error as { exitCode?: unknown }).exitCode === 'number' || typeof (error as { status?: unknown }).status === 'number';
}
