// listWorkItems, countWorkItems: a filtered page of a project's work items in (createdAt, id) order, and the
// exact count of what that listing would page.
import type { WorkItemCount } from '../../contract/types.js';
import { projectForKey } from '../core/access.js';
import { pageOf, readPaging } from '../cursors.js';
import { sha256 } from '../ids.js';
import { invalid, type RequestContext, type Route } from '../kernel.js';
import { filteredItems } from './filter.js';
import { summariesOf } from './rows.js';

/** The `filter` parameter: absent is no filter; present must be at least one character. */
export function filterParam(query: URLSearchParams): string | null {
  const f = query.get('filter');
  if (f === null) return null;
  if (f.length === 0) throw invalid('filter must be at least 1 character when present');
  return f;
}

/** The path's project and its items under the request's `filter` (`assignee:me` is the caller). */
export function filteredProjectItems(ctx: RequestContext) {
  const project = projectForKey(ctx.db, ctx.principal, ctx.params.projectKey!);
  const filter = filterParam(ctx.query);
  const userId = ctx.principal.kind === 'pat' ? ctx.principal.userId : null;
  const q = filteredItems(filter, { db: ctx.db, projectId: project.id, userId });
  return { project, filter, q };
}

export const listWorkItems: Route = {
  operationId: 'listWorkItems',
  handle(ctx) {
    const { project, filter, q } = filteredProjectItems(ctx);
    // The cursor is scoped to the project and the exact filter, so it cannot page another list.
    const collection = `work-items:${project.id}:${sha256(filter ?? '').slice(0, 24)}`;
    const page = readPaging(ctx.query, ctx.cursors, collection);
    const rows = q.rows(ctx.db, 'ORDER BY w.created_at, w.id LIMIT ? OFFSET ?', [page.limit + 1, page.offset]);
    const paged = pageOf(rows, page, ctx.cursors);
    return { status: 200, body: { items: summariesOf(ctx.db, paged.items), nextCursor: paged.nextCursor } };
  },
};

export const countWorkItems: Route = {
  operationId: 'countWorkItems',
  handle(ctx) {
    const { q } = filteredProjectItems(ctx);
    const body: WorkItemCount = { count: q.count(ctx.db) };
    return { status: 200, body };
  },
};
