// moveToBacklog: move work items out of their sprint to the backlog, all or nothing. Every key is
// checked before the first write; one unknown key refuses the whole batch and moves nothing.
import type { BacklogMove, BacklogMoved } from '../../contract/types.js';
import { transaction } from '../db.js';
import { invalid, type Reply, type RequestContext } from '../kernel.js';
import { updateColumns } from '../work-items/store.js';
import { projectForKey } from '../core/access.js';

/** Largest batch moveToBacklog accepts; the contract leaves the cap open ("refused whole"). */
export const BACKLOG_MOVE_MAX = 100;

export function moveToBacklog(ctx: RequestContext): Reply {
  const project = projectForKey(ctx.db, ctx.principal, ctx.params.projectKey!);
  const body = (ctx.body ?? {}) as BacklogMove;
  if (!Array.isArray(body.workItemKeys) || body.workItemKeys.some((k) => typeof k !== 'string')) {
    throw invalid('workItemKeys must be an array of work item keys');
  }
  if (body.workItemKeys.length > BACKLOG_MOVE_MAX) {
    throw invalid(`at most ${BACKLOG_MOVE_MAX} work items per move; nothing was moved`);
  }
  // A key named twice is moved once and reported once, at its first place.
  const keys = [...new Set(body.workItemKeys)];
  if (keys.length === 0) return { status: 200, body: { movedKeys: [] } satisfies BacklogMoved };

  return transaction(ctx.db, () => {
    const found = new Map<string, { id: string; sprint_id: string | null }>();
    const lookup = ctx.db.prepare('SELECT id, sprint_id FROM work_items WHERE project_id = ? AND key = ?');
    for (const key of keys) {
      const row = lookup.get(project.id, key) as { id: string; sprint_id: string | null } | undefined;
      if (row) found.set(key, row);
    }
    const unknown = keys.filter((k) => !found.has(k));
    if (unknown.length > 0) {
      throw invalid(`not work items of project ${project.key}: ${unknown.join(', ')}; nothing was moved`);
    }
    const now = ctx.now();
    // sprintId is part of the detail, so a real move is a change: version and updatedAt advance.
    // An item already without a sprint is left untouched and still reported (the call is idempotent).
    for (const key of keys) {
      const row = found.get(key)!;
      if (row.sprint_id !== null) updateColumns(ctx.db, row.id, { sprint_id: null }, now);
    }
    return { status: 200, body: { movedKeys: keys } satisfies BacklogMoved };
  });
}
