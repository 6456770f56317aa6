// Ready lanes (listReadyBugs, listReadyContainers): paged views of the ready set. The set is maintained on write
// (model.ts); a request filters and orders it, then reads and renders only its page. Inside a
// transaction, whose writes may yet roll back, the lanes are computed in SQL (lanes.ts) instead.
import { projectForKey } from '../core/access.js';
import { pageOfList, readPaging } from '../cursors.js';
import type { Database } from '../db.js';
import { sha256 } from '../ids.js';
import type { RequestContext, ServiceModule } from '../kernel.js';
import { readyChangesOf } from './changes.js';
import { indexedBugGroups, indexedContainers, renderIndexedContainers, renderIndexedGroups } from './indexed.js';
import { readyBugGroups, readyContainers, renderBugGroups } from './lanes.js';
import { readyIndexOf, type ReadyIndex } from './model.js';
import { readLaneParams, type LaneParams } from './params.js';

/**
 * The service never ran ANALYZE, so SQLite guessed `project_id = ?` selective and walked whole
 * projects (the filtered lists, the lanes' SQL inside transactions). After this many writes a lane
 * request refreshes SQLite's statistics (`PRAGMA optimize` over sampled rows: ~2 ms at 50,000
 * items). Small stores (tests) never reach it.
 */
const OPTIMIZE_EVERY_WRITES = 1000;
const optimizedAt = new WeakMap<Database, number>();

function refreshStatistics(db: Database): void {
  const writes = readyChangesOf(db)?.writes ?? 0;
  if (writes - (optimizedAt.get(db) ?? 0) < OPTIMIZE_EVERY_WRITES) return;
  optimizedAt.set(db, writes);
  try {
    db.exec('PRAGMA analysis_limit = 400; PRAGMA optimize = 0x10002');
  } catch {
    // Statistics are an optimisation only (a busy store may refuse the write): answer anyway.
  }
}

interface Lane<T, R> {
  fromIndex(index: ReadyIndex, projectId: string, p: LaneParams): T[];
  renderIndexed(db: Database, page: T[]): R[];
}

function lanePage<T, U, R>(
  ctx: RequestContext,
  lane: 'bugs' | 'containers',
  indexed: Lane<T, R>,
  sql: { compute(projectId: string, p: LaneParams): U[]; render(rows: U[]): R[] },
) {
  const project = projectForKey(ctx.db, ctx.principal, ctx.params.projectKey!);
  const params = readLaneParams(ctx.db, project, ctx.query, lane);
  // Cursors are scoped to the lane, the project and the exact parameters.
  const collection = `ready-${lane}:${project.id}:${sha256(params.canonical).slice(0, 24)}`;
  const page = readPaging(ctx.query, ctx.cursors, collection);
  const index = readyIndexOf(ctx.db);
  if (!index) {
    const paged = pageOfList(sql.compute(project.id, params), page, ctx.cursors);
    return { status: 200, body: { items: sql.render(paged.items), nextCursor: paged.nextCursor } };
  }
  refreshStatistics(ctx.db);
  const paged = pageOfList(indexed.fromIndex(index, project.id, params), page, ctx.cursors);
  return { status: 200, body: { items: indexed.renderIndexed(ctx.db, paged.items), nextCursor: paged.nextCursor } };
}

export const readyModule: ServiceModule = {
  name: 'ready',
  schema: '',
  routes: [
    {
      operationId: 'listReadyBugs',
      handle: (ctx) =>
        lanePage(
          ctx,
          'bugs',
          { fromIndex: indexedBugGroups, renderIndexed: renderIndexedGroups },
          {
            compute: (pid, p) => readyBugGroups(ctx.db, pid, p),
            render: (g) => renderBugGroups(ctx.db, g),
          },
        ),
    },
    {
      operationId: 'listReadyContainers',
      handle: (ctx) =>
        lanePage(
          ctx,
          'containers',
          { fromIndex: indexedContainers, renderIndexed: renderIndexedContainers },
          {
            compute: (pid, p) => readyContainers(ctx.db, pid, p),
            render: (cs) => cs,
          },
        ),
    },
  ],
};

export { readyBugGroups, readyContainers, renderBugGroups, laneOrder, type BugGroupRows } from './lanes.js';
export { readLaneParams, type LaneParams } from './params.js';
