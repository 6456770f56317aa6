// `svc auth logout`: forgets the stored token; SVC_TOKEN, if set, stays in force.
import type { Context } from '../context.js';

export type AuthLogoutOptions = Record<string, never>;

export function runAuthLogout(_opts: AuthLogoutOptions, ctx: Context): void {
  const had = ctx.config().has('token');
  ctx.config().delete('token');
  if (ctx.out.json) return ctx.out.document({ loggedOut: had });
  ctx.out.info(had ? 'Logged out: the stored token is forgotten.' : 'No stored token.');
  if (ctx.env.SVC_TOKEN) ctx.out.warn('SVC_TOKEN is still set in the environment and is used while it is.');
}
