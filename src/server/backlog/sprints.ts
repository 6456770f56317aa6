// Sprint references of the read lanes (listReadyBugs, listReadyContainers): `sprintId` is a sprint id of the
// project or the literal `active`. Direct membership only: callers compare work_items.sprint_id
// with the id returned here, never a parent's sprint.
import type { Database } from '../db.js';
import { invalid } from '../kernel.js';

export interface SprintRow {
  id: string;
  project_id: string;
  name: string;
  state: string;
  starts_at: string | null;
  ends_at: string | null;
}

/**
 * The sprint id `value` names in `projectId`, or null when `value` is absent or empty (the
 * contract: "empty means omitted"). `active` is the project's sprint in state `active`; should
 * several be active, the one that started last (then the greatest id) wins. Throws 422
 * INVALID_REQUEST for a sprint that is not of the project and for `active` between sprints.
 */
export function resolveSprint(db: Database, projectId: string, value: string | null | undefined): string | null {
  if (value === null || value === undefined || value === '') return null;
  if (value === 'active') {
    const active = db
      .prepare(
        `SELECT id FROM sprints WHERE project_id = ? AND state = 'active'
          ORDER BY starts_at IS NULL, starts_at DESC, id DESC LIMIT 1`,
      )
      .get(projectId) as { id: string } | undefined;
    if (!active) throw invalid('sprintId=active: the project has no active sprint');
    return active.id;
  }
  const sprint = db.prepare('SELECT id FROM sprints WHERE id = ? AND project_id = ?').get(value, projectId) as { id: string } | undefined;
  if (!sprint) throw invalid(`sprintId ${value} is not a sprint of this project`);
  return sprint.id;
}
