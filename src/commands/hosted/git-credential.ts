// `svc git-credential <get|store|erase>`: git starts it (credential.helper) with the broker's
// socket in its environment; the protocol itself lives in src/dispatch/hosted/credential-helper.ts.
import { SvcError } from '../../api/errors.js';
import { runGitCredential } from '../../dispatch/index.js';
import type { Context } from '../context.js';

/** A `get` with no credential for the URL: exit 1, nothing on stdout, so git fails rather than prompts. */
export class NoCredentialError extends SvcError {
  readonly kind = 'failed';
}

export interface GitCredentialOptions {
  /** git's action: get, store, erase (others are answered with nothing). */
  action: string;
}

export async function runGitCredentialCommand(opts: GitCredentialOptions, ctx: Context): Promise<void> {
  const status = await runGitCredential(opts.action, { stdin: ctx.stdin, stdout: ctx.stdout, env: ctx.env });
  if (status !== 0) throw new NoCredentialError('git-credential: no git credential of this run for that repository');
}
