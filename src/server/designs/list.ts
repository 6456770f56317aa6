// listDesigns: approved designs of a project, newest first (createdAt, then id, descending).
// `pathPrefix` keeps designs holding an asset whose repository sourcePath starts with it (exact,
// case-sensitive, as paths are); `query` is a case-insensitive substring of the title. An empty
// value of either means omitted.
import type { Page } from '../../contract/types.js';
import type { RequestContext, Reply } from '../kernel.js';
import { projectForKey } from '../core/access.js';
import { pageOfList, readPaging } from '../cursors.js';
import { toDesignRows, type DesignRecord, type DesignRow } from './store.js';

export function listDesigns(ctx: RequestContext): Reply {
  const project = projectForKey(ctx.db, ctx.principal, ctx.params.projectKey!);
  const pathPrefix = ctx.query.get('pathPrefix') ?? '';
  const query = ctx.query.get('query') ?? '';
  const collection = `designs:${project.id}:${JSON.stringify([pathPrefix, query])}`;
  const paging = readPaging(ctx.query, ctx.cursors, collection);

  const params: string[] = [project.id];
  let prefixClause = '';
  if (pathPrefix !== '') {
    prefixClause = `AND EXISTS (SELECT 1 FROM design_assets a WHERE a.design_id = d.id
                      AND substr(a.source_path, 1, length(?)) = ?)`;
    params.push(pathPrefix, pathPrefix);
  }
  let records = ctx.db
    .prepare(
      `SELECT d.id, d.project_id, d.title, d.status, d.created_at, d.updated_at, d.approved_at,
              (SELECT w.key FROM work_items w WHERE w.id = d.work_item_id) AS work_item_key
         FROM designs d
        WHERE d.project_id = ? AND d.status = 'approved' ${prefixClause}
        ORDER BY d.created_at DESC, d.id DESC`,
    )
    .all(...params) as unknown as DesignRecord[];
  if (query !== '') {
    // Filtered here rather than in SQL: SQLite's lower() folds ASCII only.
    const needle = query.toLocaleLowerCase('und');
    records = records.filter((r) => r.title.toLocaleLowerCase('und').includes(needle));
  }
  const page = pageOfList(records, paging, ctx.cursors);
  const body: Page<DesignRow> = { items: toDesignRows(ctx.db, page.items), nextCursor: page.nextCursor };
  return { status: 200, body };
}
