// `svc backlog`: listBacklog, walked page by page so the service's `total` (the whole filtered backlog)
// is printed next to however many rows --limit lets through.
import { paginatePages } from '../../api/paginate.js';
import type { WorkItemSummary } from '../../contract/types.js';
import { connect } from '../connect.js';
import type { Context } from '../context.js';
import { requireProject } from '../settings.js';
import { wholeNumber } from '../flag-values.js';
import type { BacklogListFlags } from './flags.js';

/** The flags of `svc backlog list`, as its table in register.ts declares them. */
export type BacklogListOptions = BacklogListFlags;

/** What `--json` prints: the rows and the service's count of the whole backlog. */
export interface BacklogListing {
  total: number;
  items: WorkItemSummary[];
}

export async function runBacklogList(opts: BacklogListOptions, ctx: Context): Promise<void> {
  const project = requireProject(ctx, opts.project);
  const max = wholeNumber(opts.limit, '--limit') ?? Number.POSITIVE_INFINITY;
  const api = connect(ctx);
  const listing: BacklogListing = { total: 0, items: [] };
  const pages = paginatePages(async (cursor) => {
    const page = await api.listBacklog(project, { cursor, limit: Math.min(100, max), ...(opts.filter ? { filter: opts.filter } : {}) });
    listing.total = page.total;
    return page;
  });
  for await (const page of pages) {
    listing.items.push(...page.items.slice(0, max - listing.items.length));
    if (listing.items.length >= max) break;
  }
  if (ctx.out.json) return ctx.out.document(listing);
  ctx.out.table(
    ['KEY', 'KIND', 'STATUS', 'PRIORITY', 'TITLE'],
    listing.items.map((i) => [i.key, i.kind, i.status, i.priority, i.title]),
  );
  ctx.out.info(listing.items.length < listing.total ? `${listing.items.length} of ${listing.total} in the backlog` : `${listing.total} in the backlog`);
}
