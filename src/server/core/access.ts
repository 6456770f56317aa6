// Who may see which project. A token is bound to one workspace and may be narrowed to one
// project; anything outside is answered exactly like a missing resource (404), never 403.
// Access modes: `workspace` and `public` projects are browsable by every member of the workspace;
// `members` projects only by the users in `project_members`.
import type { Database } from '../db.js';
import { notFound, type Principal } from '../kernel.js';

/** A project row as stored. */
export interface ProjectRow {
  id: string;
  workspace_id: string;
  key: string;
  name: string;
  access_mode: string;
  archived: number;
}

const PROJECT_COLUMNS = 'p.id, p.workspace_id, p.key, p.name, p.access_mode, p.archived';

/** SQL condition (with params) restricting `p` to the projects the principal may browse. */
export function browsableProjects(principal: Principal): { sql: string; params: string[] } {
  if (principal.kind === 'run') return { sql: 'p.id = ?', params: [principal.projectId] };
  const conds = [
    'p.workspace_id = ?',
    `(p.access_mode <> 'members' OR EXISTS (SELECT 1 FROM project_members pm WHERE pm.project_id = p.id AND pm.user_id = ?))`,
  ];
  const params = [principal.workspaceId, principal.userId];
  if (principal.projectId) {
    conds.push('p.id = ?');
    params.push(principal.projectId);
  }
  return { sql: conds.join(' AND '), params };
}

/** The project with `key` if the principal may browse it; otherwise the same 404 as a missing one. */
export function projectForKey(db: Database, principal: Principal, key: string): ProjectRow {
  const scope = browsableProjects(principal);
  const row = db.prepare(`SELECT ${PROJECT_COLUMNS} FROM projects p WHERE p.key = ? AND ${scope.sql}`).get(key, ...scope.params) as ProjectRow | undefined;
  if (!row) throw notFound(`project ${key}`);
  return row;
}

/** The project with internal `id` if the principal may browse it, else null. */
export function projectById(db: Database, principal: Principal, id: string): ProjectRow | null {
  const scope = browsableProjects(principal);
  return (db.prepare(`SELECT ${PROJECT_COLUMNS} FROM projects p WHERE p.id = ? AND ${scope.sql}`).get(id, ...scope.params) as ProjectRow | undefined) ?? null;
}

/**
 * A hosted run's credential may read only the work items of its own cards (docs/hosted.md). The
 * dispatch-runs module owns the cards, so it registers the check here; until it does, a run
 * credential sees the work items of its run's project.
 */
type RunItemCheck = (db: Database, runId: string, workItemId: string) => boolean;
let runItemCheck: RunItemCheck | null = null;
export function registerRunItemAccess(check: RunItemCheck): void {
  runItemCheck = check;
}
export function runMayReadItem(db: Database, principal: Principal, workItemId: string): boolean {
  if (principal.kind !== 'run' || !runItemCheck) return true;
  return runItemCheck(db, principal.runId, workItemId);
}
