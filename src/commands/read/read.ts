// whoami, workspaces, projects.
import { collectAll } from '../../api/paginate.js';
import { connect } from '../connect.js';
import type { Context } from '../context.js';

export async function whoami(ctx: Context): Promise<void> {
  const me = await connect(ctx).getMe();
  if (ctx.out.json) return ctx.out.document(me);
  ctx.out.data(`${me.user.name} <${me.user.email}>`);
  ctx.out.data(`user ${me.user.id} · workspace ${me.workspaceId} · scopes ${me.permissions.join(', ')}`);
}

export async function workspaces(ctx: Context): Promise<void> {
  const api = connect(ctx);
  const rows = await collectAll((cursor) => api.listWorkspaces({ cursor, limit: 100 }));
  if (ctx.out.json) return ctx.out.document(rows);
  ctx.out.table(['ID', 'SLUG', 'NAME'], rows.map((w) => [w.id, w.slug, w.name]));
}

export async function projectsList(ctx: Context): Promise<void> {
  const api = connect(ctx);
  const rows = await collectAll((cursor) => api.listProjects({ cursor, limit: 100 }));
  if (ctx.out.json) return ctx.out.document(rows);
  ctx.out.table(['KEY', 'ACCESS', 'ARCHIVED', 'NAME'], rows.map((p) => [p.key, p.accessMode, p.archived ? 'yes' : 'no', p.name]));
}

export async function projectShow(ctx: Context, key: string): Promise<void> {
  const project = await connect(ctx).getProject(key);
  if (ctx.out.json) return ctx.out.document(project);
  ctx.out.data(`${project.key}  ${project.name}`);
  ctx.out.data(`access ${project.accessMode}${project.archived ? ' · archived' : ''}`);
}
