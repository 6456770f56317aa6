// `svc auth status`: who the token belongs to, and where it came from (SVC_TOKEN wins over the
// stored one). The token is never printed: only its prefix and last four characters.
import { connect } from '../connect.js';
import type { Context } from '../context.js';
import { AuthError } from '../exit-codes.js';
import { resolveBaseUrl } from '../settings.js';

export type AuthStatusOptions = Record<string, never>;

/** The prefix and, for a token long enough that it gives little away, its last four characters. */
export function maskToken(token: string): string {
  // A short token would be shown whole by prefix + last four: show only its prefix then.
  const tail = token.length >= 24 ? token.slice(-4) : '';
  return `${token.slice(0, 8)}${'*'.repeat(8)}${tail}`;
}

export async function runAuthStatus(_opts: AuthStatusOptions, ctx: Context): Promise<void> {
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
