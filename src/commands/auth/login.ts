// `svc auth login --with-token`: the token is read from stdin and stored (config file, mode 0600)
// only once the service accepted it.
import { text } from 'node:stream/consumers';
import { ApiError } from '../../api/errors.js';
import { connect } from '../connect.js';
import type { Context } from '../context.js';
import { AuthError, UsageError } from '../exit-codes.js';
import { resolveBaseUrl } from '../settings.js';
import type { AuthLoginFlags } from './flags.js';

/** The flags of `svc auth login`, as its table in register.ts declares them. */
export type AuthLoginOptions = AuthLoginFlags;

export async function runAuthLogin(opts: AuthLoginOptions, ctx: Context): Promise<void> {
  if (!opts.withToken) {
    throw new UsageError('pass --with-token and the token on standard input: svc auth login --with-token < token.txt');
  }
  const token = (await text(ctx.stdin)).trim();
  if (!token) throw new UsageError('no token on standard input');
  if (!token.startsWith('svc_pat_')) throw new AuthError('that is not a personal access token (it must start with svc_pat_)');
  const me = await connect(ctx, { token })
    .getMe()
    .catch((error: unknown) => {
      // The service's own words ("authentication required") do not say that nothing was stored.
      if (error instanceof ApiError && (error.status === 401 || error.status === 403)) {
        throw new AuthError(`${resolveBaseUrl(ctx)} refused that token (${error.status}); nothing was stored: check it, or create a new one`);
      }
      throw error;
    });
  ctx.config().set('token', token);
  // Otherwise the next command silently acts as whoever SVC_TOKEN belongs to.
  if (ctx.env.SVC_TOKEN && ctx.env.SVC_TOKEN !== token) ctx.out.warn('SVC_TOKEN is set and wins over the stored token until it is unset.');
  if (ctx.out.json) return ctx.out.document({ user: me.user, workspaceId: me.workspaceId, permissions: me.permissions });
  ctx.out.info(`Logged in to ${resolveBaseUrl(ctx)} as ${me.user.name} <${me.user.email}>, workspace ${me.workspaceId}`);
}
