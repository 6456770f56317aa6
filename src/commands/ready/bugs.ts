// `svc ready bugs`: ready bug work, grouped by its container (listReadyBugs).
import { paginate } from '../../api/paginate.js';
import { connect } from '../connect.js';
import type { Context } from '../context.js';
import { requireProject } from '../settings.js';
import { laneFilters } from './lane-filters.js';
import type { ReadyBugsFlags } from './flags.js';

/** The flags of `svc ready bugs`, as its table in register.ts declares them. */
export type ReadyBugsOptions = ReadyBugsFlags;

export async function runReadyBugs(opts: ReadyBugsOptions, ctx: Context): Promise<void> {
  const project = requireProject(ctx, opts.project);
  const api = connect(ctx);
  const filters = {
    ...laneFilters(opts),
    ...(opts.kind ? { kind: opts.kind } : {}),
    ...(opts.ancestor ? { ancestor: opts.ancestor } : {}),
    ...(opts.allowSoftBlock ? { allowSoftBlock: 'true' } : {}),
  };
  const groups = [];
  for await (const g of paginate((cursor) => api.listReadyBugs(project, { ...filters, cursor, limit: 100 }))) groups.push(g);
  if (ctx.out.json) return ctx.out.document(groups);
  ctx.out.table(
    ['GROUP', 'KEY', 'KIND', 'PRIORITY', 'TITLE'],
    groups.flatMap((g) => g.items.map((i) => [g.container?.key ?? '-', i.key, i.kind, i.priority, i.title])),
  );
}
