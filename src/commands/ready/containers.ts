// `svc ready containers`: runnable containers, next first (listReadyContainers).
import { paginate } from '../../api/paginate.js';
import { connect } from '../connect.js';
import type { Context } from '../context.js';
import { requireProject } from '../settings.js';
import { laneFilters, type LaneOptions } from './lane-filters.js';

export type ReadyContainersOptions = LaneOptions;

export async function runReadyContainers(opts: ReadyContainersOptions, ctx: Context): Promise<void> {
  const project = requireProject(ctx, opts.project);
  const api = connect(ctx);
  const rows = [];
  for await (const c of paginate((cursor) => api.listReadyContainers(project, { ...laneFilters(opts), cursor, limit: 100 }))) rows.push(c);
  if (ctx.out.json) return ctx.out.document(rows);
  ctx.out.table(
    ['KEY', 'KIND', 'PRIORITY', 'READY', 'CHILDREN', 'TITLE'],
    rows.map((c) => [c.key, c.kind, c.priority, String(c.readyLeafCount), String(c.childCount), c.title]),
  );
}
