// Ready lanes (operations 23 and 24): paged views of the ready set. The whole list is computed
// once per project, parameters and store version (cache.ts), then paged.
import { projectForKey } from '../core/access.js';
import { pageOfList, readPaging } from '../cursors.js';
import { sha256 } from '../ids.js';
import type { RequestContext, ServiceModule } from '../kernel.js';
import { cachedLane } from './cache.js';
import { readyBugGroups, readyContainers, renderBugGroups } from './lanes.js';
import { readLaneParams } from './params.js';

function lanePage<T, R>(
  ctx: RequestContext,
  lane: 'bugs' | 'containers',
  compute: (projectId: string, p: ReturnType<typeof readLaneParams>) => T[],
  render: (rows: T[]) => R[],
) {
  const project = projectForKey(ctx.db, ctx.principal, ctx.params.projectKey!);
  const params = readLaneParams(ctx.db, project, ctx.query, lane);
  // Cursors are scoped to the lane, the project and the exact parameters.
  const collection = `ready-${lane}:${project.id}:${sha256(params.canonical).slice(0, 24)}`;
  const page = readPaging(ctx.query, ctx.cursors, collection);
  // Cached lists are shared between requests: render() must build new objects, never change them.
  const all = cachedLane(ctx.db, `${collection}:${params.canonical}`, () => compute(project.id, params));
  const paged = pageOfList(all, page, ctx.cursors);
  return { status: 200, body: { items: render(paged.items), nextCursor: paged.nextCursor } };
}

export const readyModule: ServiceModule = {
  name: 'ready',
  schema: '',
  routes: [
    {
      operationId: 'listReadyBugs',
      handle: (ctx) => lanePage(ctx, 'bugs', (pid, p) => readyBugGroups(ctx.db, pid, p), (g) => renderBugGroups(ctx.db, g)),
    },
    {
      operationId: 'listReadyContainers',
      handle: (ctx) => lanePage(ctx, 'containers', (pid, p) => readyContainers(ctx.db, pid, p), (cs) => cs.map((c) => ({ ...c }))),
    },
  ],
};

export { readyBugGroups, readyContainers, renderBugGroups, laneOrder, type BugGroupRows } from './lanes.js';
export { readLaneParams, type LaneParams } from './params.js';
