// The in-process admin API: what the real service does through its product UI and the contract
// does not show (workspaces, users, tokens, statuses, links, sprints). Used by the seed, the tests
// and `svc server token create`.
import { PRIORITIES, SCOPES, type Kind, type Scope } from '../contract/types.js';
import { transaction, type Database } from './db.js';
import { iso, mintSecret, newId, sha256 } from './ids.js';
import { rowByKey, type WorkItemRow } from './work-items/rows.js';
import { STATUSES } from './work-items/status.js';
import { insertWorkItem, touch, updateColumns } from './work-items/store.js';
import { checkPlacement } from './work-items/tree.js';

export type LinkKind = 'blocks' | 'relates' | 'duplicates' | 'clones';

export interface AdminWorkItem {
  projectKey: string;
  kind: Kind;
  title: string;
  parentKey?: string;
  status?: string;
  priority?: string;
  type?: string | null;
  executor?: string | null;
  descriptionMd?: string | null;
  assigneeId?: string | null;
  reporterId?: string;
  labels?: string[];
  components?: string[];
  /** Keys of items that block this one. */
  blockedBy?: string[];
  targetRepo?: string | null;
  targetRepos?: string[];
  targetRepositories?: string[];
  deliveries?: unknown[];
  sprintId?: string | null;
  storyPoints?: number | null;
  estimateMinutes?: number | null;
  dueDate?: string | null;
  archived?: boolean;
  extra?: Record<string, unknown>;
  /** Workspace of the project (needed only when several workspaces share a project key). */
  workspaceId?: string;
}

export type Admin = ReturnType<typeof createAdmin>;

export function createAdmin(db: Database, now: () => Date = () => new Date()) {
  const projectId = (key: string, workspaceId?: string): string => {
    const rows = db.prepare('SELECT id, workspace_id FROM projects WHERE key = ?').all(key) as { id: string; workspace_id: string }[];
    const row = workspaceId ? rows.find((r) => r.workspace_id === workspaceId) : rows[0];
    if (!row || (!workspaceId && rows.length > 1)) throw new Error(`admin: no unique project ${key}`);
    return row.id;
  };
  const item = (key: string): WorkItemRow => {
    const row = rowByKey(db, key);
    if (!row) throw new Error(`admin: no work item ${key}`);
    return row;
  };
  const firstUser = (): string => (db.prepare('SELECT id FROM users ORDER BY rowid LIMIT 1').get() as { id: string }).id;

  const admin = {
    db,
    ...accounts(db, now, projectId),
    createSprint(opts: { projectKey: string; name: string; state?: 'future' | 'active' | 'closed'; workspaceId?: string }): { id: string } {
      const id = newId('spr');
      db.prepare('INSERT INTO sprints (id, project_id, name, state) VALUES (?, ?, ?, ?)').run(
        id,
        projectId(opts.projectKey, opts.workspaceId),
        opts.name,
        opts.state ?? 'future',
      );
      return { id };
    },
    setSprintState(sprintId: string, state: 'future' | 'active' | 'closed'): void {
      db.prepare('UPDATE sprints SET state = ? WHERE id = ?').run(state, sprintId);
    },
    /** Creates a work item with any field the service stores; parent rules are enforced. */
    createWorkItem(w: AdminWorkItem): WorkItemRow {
      return transaction(db, () => {
        const pid = projectId(w.projectKey, w.workspaceId);
        const parent = w.parentKey ? item(w.parentKey) : null;
        checkPlacement(db, w.kind, parent, pid);
        if (w.status && !STATUSES.includes(w.status)) throw new Error(`admin: unknown status ${w.status}`);
        checkPriority(w.priority);
        const row = insertWorkItem(db, storedFields(w, pid, parent?.id ?? null, w.reporterId ?? firstUser(), now()), now());
        for (const blocker of w.blockedBy ?? []) admin.addLink(blocker, row.key, 'blocks');
        return rowByKey(db, row.key)!;
      });
    },
    setStatus(key: string, status: string): void {
      if (!STATUSES.includes(status)) throw new Error(`admin: unknown status ${status}`);
      updateColumns(db, item(key).id, { status }, now());
    },
    /** Sets stored columns directly (e.g. `{ sprint_id: …, labels: '["x"]' }`). */
    setFields(key: string, columns: Record<string, string | number | null>): void {
      if ('priority' in columns) checkPriority(columns.priority);
      if ('status' in columns && !STATUSES.includes(String(columns.status))) throw new Error(`admin: unknown status ${columns.status}`);
      updateColumns(db, item(key).id, columns, now());
    },
    archiveItem(key: string, archived = true): void {
      updateColumns(db, item(key).id, { archived_at: archived ? iso(now()) : null }, now());
    },
    /** `from` blocks/relates to/duplicates/clones `to`. */
    addLink(fromKey: string, toKey: string, kind: LinkKind): void {
      const from = item(fromKey);
      const to = item(toKey);
      db.prepare('INSERT OR IGNORE INTO work_item_links (from_id, to_id, kind) VALUES (?, ?, ?)').run(from.id, to.id, kind);
      touch(db, from.id, now());
      touch(db, to.id, now());
    },
    removeLink(fromKey: string, toKey: string, kind: LinkKind): void {
      db.prepare('DELETE FROM work_item_links WHERE from_id = ? AND to_id = ? AND kind = ?').run(item(fromKey).id, item(toKey).id, kind);
    },
    workItem: item,
    projectId,
  };
  return admin;
}

/** The contract's priorities only: a store seeded with others answers what no client can parse. */
function checkPriority(priority: unknown): void {
  if (priority !== undefined && !(PRIORITIES as readonly unknown[]).includes(priority)) {
    throw new Error(`admin: unknown priority ${String(priority)} (one of ${PRIORITIES.join(', ')})`);
  }
}

/** Workspaces, users and their memberships, projects, tokens. */
function accounts(db: Database, now: () => Date, projectId: (key: string, workspaceId?: string) => string) {
  return {
    createWorkspace(opts: { name: string; slug?: string }): { id: string } {
      const id = newId('ws');
      const slug = opts.slug ?? opts.name.toLowerCase().replace(/[^a-z0-9]+/g, '-');
      db.prepare('INSERT INTO workspaces (id, name, slug, created_at) VALUES (?, ?, ?, ?)').run(id, opts.name, slug, iso(now()));
      return { id };
    },
    createUser(opts: { name: string; email: string }): { id: string } {
      const id = newId('usr');
      db.prepare('INSERT INTO users (id, name, email) VALUES (?, ?, ?)').run(id, opts.name, opts.email);
      return { id };
    },
    addMember(workspaceId: string, userId: string): void {
      db.prepare('INSERT OR IGNORE INTO memberships (workspace_id, user_id) VALUES (?, ?)').run(workspaceId, userId);
    },
    removeMember(workspaceId: string, userId: string): void {
      db.prepare('DELETE FROM memberships WHERE workspace_id = ? AND user_id = ?').run(workspaceId, userId);
    },
    createProject(opts: { workspaceId: string; key: string; name: string; accessMode?: string; archived?: boolean }): { id: string; key: string } {
      if (!/^[A-Z][A-Z0-9]*$/.test(opts.key)) throw new Error(`admin: bad project key ${opts.key}`);
      const id = newId('prj');
      db.prepare('INSERT INTO projects (id, workspace_id, key, name, access_mode, archived) VALUES (?, ?, ?, ?, ?, ?)').run(
        id,
        opts.workspaceId,
        opts.key,
        opts.name,
        opts.accessMode ?? 'workspace',
        opts.archived ? 1 : 0,
      );
      return { id, key: opts.key };
    },
    /** Lets a user browse a `members` project. */
    addProjectMember(projectKey: string, userId: string, workspaceId?: string): void {
      db.prepare('INSERT OR IGNORE INTO project_members (project_id, user_id) VALUES (?, ?)').run(projectId(projectKey, workspaceId), userId);
    },
    /** Issues a personal access token and returns it raw (only its hash is stored). */
    createToken(opts: { workspaceId: string; userId: string; projectKey?: string; scopes?: readonly Scope[]; expiresAt?: string }): {
      id: string;
      token: string;
    } {
      const token = mintSecret('svc_pat_');
      const id = newId('tok');
      const project = opts.projectKey ? projectId(opts.projectKey, opts.workspaceId) : null;
      db.prepare('INSERT INTO tokens (id, hash, user_id, workspace_id, project_id, scopes, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)').run(
        id,
        sha256(token),
        opts.userId,
        opts.workspaceId,
        project,
        JSON.stringify(opts.scopes ?? SCOPES),
        iso(now()),
        opts.expiresAt ?? null,
      );
      return { id, token };
    },
    revokeToken(idOrToken: string): void {
      db.prepare('UPDATE tokens SET revoked_at = ? WHERE id = ? OR hash = ?').run(iso(now()), idOrToken, sha256(idOrToken));
    },
  };
}

/** What the store keeps of an admin work item: every field given, as given. */
function storedFields(w: AdminWorkItem, projectId: string, parentId: string | null, reporterId: string, at: Date): Parameters<typeof insertWorkItem>[1] {
  return {
    projectId,
    kind: w.kind,
    title: w.title,
    reporterId,
    parentId,
    status: w.status,
    priority: w.priority,
    type: w.type,
    executor: w.executor,
    descriptionMd: w.descriptionMd,
    assigneeId: w.assigneeId,
    labels: w.labels,
    components: w.components,
    targetRepo: w.targetRepo,
    targetRepos: w.targetRepos,
    targetRepositories: w.targetRepositories,
    deliveries: w.deliveries,
    sprintId: w.sprintId,
    storyPoints: w.storyPoints,
    estimateMinutes: w.estimateMinutes,
    dueDate: w.dueDate,
    archivedAt: w.archived ? iso(at) : null,
    extra: w.extra,
  };
}
