// Exit codes of README.md#exit-codes. The table and the mapping from errors live in the API layer (the
// lowest layer that raises them); this module adds what only the CLI knows: usage errors and the
// help text of `svc help exit-codes`.
import { EXIT, exitCodeFor, SvcError } from '../api/errors.js';

export { EXIT };

export const EXIT_CODE_HELP: [number, string][] = [
  [EXIT.ok, 'success'],
  [EXIT.failed, 'the run ended failed (a leg failed, halted), or an unexpected error'],
  [EXIT.usage, 'usage or validation: a bad flag, a bad key, a 422 from the service'],
  [EXIT.auth, 'authentication or permission (401, 403), or no usable token'],
  [EXIT.notFound, 'not found (404)'],
  [EXIT.unavailable, 'the service stayed unavailable (5xx, network, 429 past --max-wait)'],
  [EXIT.entitlement, 'entitlement exhausted (402)'],
  [EXIT.sigint, 'interrupted by SIGINT'],
  [EXIT.sigterm, 'terminated by SIGTERM'],
];

/** A mistake in what the user typed: a one-line message, exit 2. */
export class UsageError extends SvcError {
  readonly kind = 'usage';
}

/** Not logged in, or a token of the wrong kind: exit 3. */
export class AuthError extends SvcError {
  readonly kind = 'auth';
}

/** How a command ended: by a signal, by an error it let escape, or with the code it set (or none). */
export type CommandEnd = { signal: 'SIGINT' | 'SIGTERM' } | { error: unknown } | { exitCode: number | undefined };

/**
 * The one place a command's end becomes svc's exit code (README.md#exit-codes): a signal's 130/143;
 * commander's help and version are successes and its other errors usage errors; any other error
 * through the API layer's table (`exitCodeFor`); else the code the command set, 0 by default.
 */
export function exitCodeOf(end: CommandEnd): number {
  if ('signal' in end) return end.signal === 'SIGTERM' ? EXIT.sigterm : EXIT.sigint;
  if ('exitCode' in end) return end.exitCode ?? EXIT.ok;
  if (isCommanderEnd(end.error)) {
    const e = end.error as { code: string; exitCode?: number };
    return e.exitCode === 0 || e.code === 'commander.helpDisplayed' || e.code === 'commander.version' ? EXIT.ok : EXIT.usage;
  }
  return exitCodeFor(end.error);
}

/** commander's own ends (usage errors, help, version): it has said what it had to say. */
export function isCommanderEnd(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('commander.');
}
