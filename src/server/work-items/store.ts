// Writes of work items shared by createWorkItem, updateWorkItem, the admin API and the seed: allocation of
// the per-project number, defaults, and the one place an item's version (its ETag) moves.
import type { Kind } from '../../contract/types.js';
import { transaction, type Database } from '../db.js';
import { iso } from '../ids.js';
import { rowById, type WorkItemRow } from './rows.js';

/** Everything an item can be created with; omitted fields take the service's defaults. */
export interface NewWorkItem {
  projectId: string;
  kind: Kind;
  title: string;
  reporterId: string;
  parentId?: string | null;
  descriptionMd?: string | null;
  status?: string;
  priority?: string;
  type?: string | null;
  executor?: string | null;
  storyPoints?: number | null;
  estimateMinutes?: number | null;
  targetRepo?: string | null;
  targetRepos?: string[];
  targetRepositories?: string[];
  assigneeId?: string | null;
  dueDate?: string | null;
  labels?: string[];
  components?: string[];
  sprintId?: string | null;
  deliveries?: unknown[];
  archivedAt?: string | null;
  extra?: Record<string, unknown>;
}

/** The `meta` row of a project's default target repositories (`svc server init --repo`). */
export const projectReposMeta = (projectId: string): string => `project_repos:${projectId}`;

/** The repositories an item of the project that names none is created with (none by default). */
function defaultRepos(db: Database, projectId: string): string[] {
  const row = db.prepare('SELECT value FROM meta WHERE name = ?').get(projectReposMeta(projectId)) as { value: string } | undefined;
  return row ? (JSON.parse(row.value) as string[]) : [];
}

/**
 * Inserts an item. Its id embeds the project and the zero-padded number, so (createdAt, id) order
 * is creation order even for items created within the same millisecond.
 */
export function insertWorkItem(db: Database, item: NewWorkItem, now: Date): WorkItemRow {
  return transaction(db, () => {
    const project = db.prepare('SELECT key, next_number FROM projects WHERE id = ?').get(item.projectId) as { key: string; next_number: number } | undefined;
    if (!project) throw new Error(`no project ${item.projectId}`);
    const number = project.next_number;
    db.prepare('UPDATE projects SET next_number = next_number + 1 WHERE id = ?').run(item.projectId);
    const id = `wi_${item.projectId.replace(/^prj_/, '')}_${String(number).padStart(10, '0')}`;
    const at = iso(now);
    const named = item.targetRepo || item.targetRepos?.length || item.targetRepositories?.length;
    const targetRepos = named ? (item.targetRepos ?? []) : defaultRepos(db, item.projectId);
    db.prepare(
      `INSERT INTO work_items (id, project_id, number, key, kind, type, title, description_md, status, priority,
         parent_id, assignee_id, reporter_id, due_date, estimate_minutes, story_points, executor, sprint_id,
         target_repo, target_repos, target_repositories, labels, components, deliveries, extra, archived_at,
         created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      id,
      item.projectId,
      number,
      `${project.key}-${number}`,
      item.kind,
      item.type ?? null,
      item.title,
      item.descriptionMd ?? null,
      item.status ?? 'todo',
      item.priority ?? 'medium',
      item.parentId ?? null,
      item.assigneeId ?? null,
      item.reporterId,
      item.dueDate ?? null,
      item.estimateMinutes ?? null,
      item.storyPoints ?? null,
      item.executor ?? null,
      item.sprintId ?? null,
      item.targetRepo ?? null,
      JSON.stringify(targetRepos),
      JSON.stringify(item.targetRepositories ?? []),
      JSON.stringify(item.labels ?? []),
      JSON.stringify(item.components ?? []),
      JSON.stringify(item.deliveries ?? []),
      JSON.stringify(item.extra ?? {}),
      item.archivedAt ?? null,
      at,
      at,
    );
    return rowById(db, id)!;
  });
}

/** Column values to set on an item, by column name (already validated by the caller). */
export type ColumnChanges = Record<string, string | number | null>;

/** Applies changes, bumps the version and updatedAt. No changes: nothing moves. */
export function updateColumns(db: Database, id: string, changes: ColumnChanges, now: Date): WorkItemRow {
  const cols = Object.keys(changes);
  if (cols.length > 0) {
    for (const c of cols) if (!/^[a-z_]+$/.test(c)) throw new Error(`bad column ${c}`);
    db.prepare(`UPDATE work_items SET ${cols.map((c) => `${c} = ?`).join(', ')}, version = version + 1, updated_at = ? WHERE id = ?`).run(
      ...cols.map((c) => changes[c]!),
      iso(now),
      id,
    );
  }
  return rowById(db, id)!;
}

/** Marks an item changed (a link or a child moved) so an `If-Match` taken before no longer holds. */
export function touch(db: Database, id: string, now: Date): void {
  db.prepare('UPDATE work_items SET version = version + 1, updated_at = ? WHERE id = ?').run(iso(now), id);
}
