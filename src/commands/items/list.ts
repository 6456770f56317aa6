// `svc items list`: listWorkItems, followed page by page up to --limit.
import { paginate } from '../../api/paginate.js';
import type { WorkItemSummary } from '../../contract/types.js';
import { connect } from '../connect.js';
import type { Context } from '../context.js';
import { wholeNumber } from '../flag-values.js';
import { requireProject } from '../settings.js';
import type { ItemsListFlags } from './flags.js';

/** The flags of `svc items list`, as its table in register.ts declares them. */
export type ItemsListOptions = ItemsListFlags;

const summaryRow = (i: WorkItemSummary) => [i.key, i.kind, i.status, i.priority, i.title];

export async function runItemsList(opts: ItemsListOptions, ctx: Context): Promise<void> {
  const project = requireProject(ctx, opts.project);
  const max = wholeNumber(opts.limit, '--limit');
  const api = connect(ctx);
  const rows: WorkItemSummary[] = [];
  const pages = paginate(
    (cursor) => api.listWorkItems(project, { cursor, limit: 100, ...(opts.filter ? { filter: opts.filter } : {}) }),
    max ? { maxItems: max } : {},
  );
  for await (const item of pages) rows.push(item);
  if (ctx.out.json) return ctx.out.document(rows);
  ctx.out.table(['KEY', 'KIND', 'STATUS', 'PRIORITY', 'TITLE'], rows.map(summaryRow));
}
