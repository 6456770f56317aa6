// `svc server token create`: a personal access token of the local service, printed once.
import type { Context } from '../context.js';
import type { TokenCreateFlags } from './flags.js';

/** The flags of `svc server token create`, with the `--db` of whichever command got it. */
export type TokenCreateOptions = Omit<TokenCreateFlags, 'db'> & { db: string };

export async function runTokenCreate(opts: TokenCreateOptions, ctx: Context): Promise<void> {
  const { runServerCommand } = await import('../../server/index.js');
  const scopes = opts.scopes
    ?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  ctx.exitCode = await runServerCommand({ command: 'token-create', ...opts, ...(scopes ? { scopes } : {}) }, { stdout: ctx.stdout, stderr: ctx.stderr });
}
