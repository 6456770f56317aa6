// listWorkspaces: the workspaces the token's owner belongs to — the only answer not scoped to the
// token's own workspace (the contract).
import type { Workspace } from '../../contract/types.js';
import { pageOf, readPaging } from '../cursors.js';
import type { Route } from '../kernel.js';

interface WorkspaceRow {
  id: string;
  name: string;
  slug: string;
  created_at: string;
}

export const listWorkspaces: Route = {
  operationId: 'listWorkspaces',
  handle({ db, principal, query, cursors }) {
    if (principal.kind !== 'pat') throw new Error('listWorkspaces reached with a run credential');
    const page = readPaging(query, cursors, `workspaces:${principal.userId}`);
    const rows = db
      .prepare(
        `SELECT w.id, w.name, w.slug, w.created_at FROM workspaces w
           JOIN memberships m ON m.workspace_id = w.id AND m.user_id = ?
          ORDER BY w.created_at, w.id LIMIT ? OFFSET ?`,
      )
      .all(principal.userId, page.limit + 1, page.offset) as unknown as WorkspaceRow[];
    const items: Workspace[] = rows.map((r) => ({ id: r.id, name: r.name, slug: r.slug, createdAt: r.created_at }));
    return { status: 200, body: pageOf(items, page, cursors) };
  },
};
