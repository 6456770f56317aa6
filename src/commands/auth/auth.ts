// `svc auth`: the token lives in the config file (mode 0600) or in SVC_TOKEN, which wins. It is
// never printed: status shows its prefix and last four characters.
import { text } from 'node:stream/consumers';
import { ApiError } from '../../api/errors.js';
import { connect } from '../connect.js';
import type { Context } from '../context.js';
import { AuthError, UsageError } from '../exit-codes.js';
import { resolveBaseUrl } from '../settings.js';

/** The prefix and, for a token long enough that it gives little away, its last four characters. */
export function maskToken(token: string): string {
  // A short token would be shown whole by prefix + last four: show only its prefix then.
  const tail = token.length >= 24 ? token.slice(-4) : '';
  return `${token.slice(0, 8)}${'*'.repeat(8)}${tail}`;
}

export async function authLogin(opts: { withToken?: boolean }, ctx: Context): Promise<void> {
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

export async function authStatus(ctx: Context): Promise<void> {
  const fromEnv = Boolean(ctx.env.SVC_TOKEN);
  const token = ctx.env.SVC_TOKEN || ctx.config().get('token');
  if (!token) throw new AuthError('not logged in: set SVC_TOKEN or run `svc auth login --with-token`');
  const me = await connect(ctx).getMe();
  const status = {
    baseUrl: resolveBaseUrl(ctx),
    token: maskToken(token),
    source: fromEnv ? 'SVC_TOKEN' : 'config',
    user: me.user,
    workspaceId: me.workspaceId,
    permissions: me.permissions,
  };
  if (ctx.out.json) return ctx.out.document(status);
  ctx.out.data(`${status.baseUrl}`);
  ctx.out.data(`  user:       ${me.user.name} <${me.user.email}> (${me.user.id})`);
  ctx.out.data(`  workspace:  ${me.workspaceId}`);
  ctx.out.data(`  scopes:     ${me.permissions.join(', ')}`);
  ctx.out.data(`  token:      ${status.token} (from ${status.source})`);
}

export function authLogout(ctx: Context): void {
  const had = ctx.config().has('token');
  ctx.config().delete('token');
  if (ctx.out.json) return ctx.out.document({ loggedOut: had });
  ctx.out.info(had ? 'Logged out: the stored token is forgotten.' : 'No stored token.');
  if (ctx.env.SVC_TOKEN) ctx.out.warn('SVC_TOKEN is still set in the environment and is used while it is.');
}
