// listProjects, getProject: the projects the caller may browse in the bound workspace.
import type { AccessLevel, Project } from '../../contract/types.js';
import { pageOf, readPaging } from '../cursors.js';
import type { Route } from '../kernel.js';
import { browsableProjects, projectForKey, type ProjectRow } from './access.js';

/** accessLevel is deprecated and derived (the contract's fields); `limited` is never emitted. */
const LEVEL_OF_MODE: Record<string, AccessLevel> = { workspace: 'open', members: 'private', public: 'public' };

export function projectBody(row: ProjectRow): Project {
  return {
    key: row.key,
    name: row.name,
    accessMode: row.access_mode,
    accessLevel: LEVEL_OF_MODE[row.access_mode] ?? 'private',
    archived: row.archived === 1,
  };
}

export const listProjects: Route = {
  operationId: 'listProjects',
  handle({ db, principal, query, cursors }) {
    const scope = browsableProjects(principal);
    // The collection names the token's view, so a cursor of another token's list is refused.
    const view = principal.kind === 'pat' ? `${principal.workspaceId}:${principal.userId}:${principal.projectId ?? '*'}` : principal.runId;
    const page = readPaging(query, cursors, `projects:${view}`);
    const rows = db
      .prepare(
        `SELECT p.id, p.workspace_id, p.key, p.name, p.access_mode, p.archived FROM projects p
          WHERE ${scope.sql} ORDER BY p.key LIMIT ? OFFSET ?`,
      )
      .all(...scope.params, page.limit + 1, page.offset) as unknown as ProjectRow[];
    return { status: 200, body: pageOf(rows.map(projectBody), page, cursors) };
  },
};

export const getProject: Route = {
  operationId: 'getProject',
  handle({ db, principal, params }) {
    return { status: 200, body: projectBody(projectForKey(db, principal, params.projectKey!)) };
  },
};
