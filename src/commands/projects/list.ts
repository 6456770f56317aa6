// `svc projects [list]`: the projects the token may browse (listProjects), every page.
import { collectAll } from '../../api/paginate.js';
import { connect } from '../connect.js';
import type { Context } from '../context.js';

export type ProjectsListOptions = Record<string, never>;

export async function runProjectsList(_opts: ProjectsListOptions, ctx: Context): Promise<void> {
  const api = connect(ctx);
  const rows = await collectAll((cursor) => api.listProjects({ cursor, limit: 100 }));
  if (ctx.out.json) return ctx.out.document(rows);
  ctx.out.table(
    ['KEY', 'ACCESS', 'ARCHIVED', 'NAME'],
    rows.map((p) => [p.key, p.accessMode, p.archived ? 'yes' : 'no', p.name]),
  );
}
