// `svc whoami`: who the token belongs to (getMe).
import { connect } from '../connect.js';
import type { Context } from '../context.js';

export type WhoamiOptions = Record<string, never>;

export async function runWhoami(_opts: WhoamiOptions, ctx: Context): Promise<void> {
  const me = await connect(ctx).getMe();
  if (ctx.out.json) return ctx.out.document(me);
  ctx.out.data(`${me.user.name} <${me.user.email}>`);
  ctx.out.data(`user ${me.user.id} · workspace ${me.workspaceId} · scopes ${me.permissions.join(', ')}`);
}
