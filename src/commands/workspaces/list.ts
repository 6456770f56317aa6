// `svc workspaces`: the workspaces the token owner belongs to (listWorkspaces), every page.
import { collectAll } from '../../api/paginate.js';
import { connect } from '../connect.js';
import type { Context } from '../context.js';

export type WorkspacesListOptions = Record<string, never>;

export async function runWorkspacesList(_opts: WorkspacesListOptions, ctx: Context): Promise<void> {
  const api = connect(ctx);
  const rows = await collectAll((cursor) => api.listWorkspaces({ cursor, limit: 100 }));
  if (ctx.out.json) return ctx.out.document(rows);
  ctx.out.table(
    ['ID', 'SLUG', 'NAME'],
    rows.map((w) => [w.id, w.slug, w.name]),
  );
}
