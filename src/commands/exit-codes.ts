// Exit codes of DISPATCH.md §2. The table and the mapping from errors live in the API layer (the
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

/** The one place an error becomes an exit code: commander's usage errors, then the API's table. */
export function exitCodeOf(error: unknown): number {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && code.startsWith('commander.')) return EXIT.usage;
  return exitCodeFor(error);
}
