// listBacklog: the backlog in rank order with a total. The backlog holds the project's items
// that are in no sprint (or only in a closed one), not in a done category and not archived
// (unless the filter names `archived`). `filter` is listWorkItems's grammar, applied on top.
// Rank order: `rank` ascending; items never ranked follow, oldest first; (createdAt, id) breaks ties.
import type { RankedPage, WorkItemSummary } from '../../contract/types.js';
import { pageOf, readPaging } from '../cursors.js';
import { sha256 } from '../ids.js';
import type { Reply, RequestContext } from '../kernel.js';
import { filteredProjectItems } from '../work-items/list.js';
import { summariesOf } from '../work-items/rows.js';
import { DONE_SQL } from '../work-items/status.js';

export function listBacklog(ctx: RequestContext): Reply {
  const { project, filter, q } = filteredProjectItems(ctx);
  q.where(`w.sprint_id IS NULL OR w.sprint_id IN (SELECT s.id FROM sprints s WHERE s.state = 'closed')`).where(`w.status NOT IN ${DONE_SQL}`);
  // Scoped to the project and the exact filter, so a cursor cannot page another list.
  const paging = readPaging(ctx.query, ctx.cursors, `backlog:${project.id}:${sha256(filter ?? '').slice(0, 24)}`);
  const rows = q.rows(ctx.db, 'ORDER BY w.rank IS NULL, w.rank, w.created_at, w.id LIMIT ? OFFSET ?', [paging.limit + 1, paging.offset]);
  const page = pageOf(rows, paging, ctx.cursors);
  const body: RankedPage<WorkItemSummary> = {
    items: summariesOf(ctx.db, page.items),
    nextCursor: page.nextCursor,
    total: q.count(ctx.db),
  };
  return { status: 200, body };
}
