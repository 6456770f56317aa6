// `svc projects show KEY`: one project (getProject).
import { connect } from '../connect.js';
import type { Context } from '../context.js';

export interface ProjectsShowOptions {
  key: string;
}

export async function runProjectsShow(opts: ProjectsShowOptions, ctx: Context): Promise<void> {
  const project = await connect(ctx).getProject(opts.key);
  if (ctx.out.json) return ctx.out.document(project);
  ctx.out.data(`${project.key}  ${project.name}`);
  ctx.out.data(`access ${project.accessMode}${project.archived ? ' · archived' : ''}`);
}
