// Work item rows as stored, and their wire shapes: summary, link item, child item. Dependencies of
// a whole page are loaded with one query, never one per row.
import type { ChildItem, Dependencies, DependencyRef, LinkItem, WorkItemSummary } from '../../contract/types.js';
import type { Database } from '../db.js';
import { categoryOf } from './status.js';

export interface WorkItemRow {
  id: string;
  project_id: string;
  number: number;
  key: string;
  kind: string;
  type: string | null;
  title: string;
  description_md: string | null;
  status: string;
  priority: string;
  parent_id: string | null;
  assignee_id: string | null;
  reporter_id: string;
  due_date: string | null;
  estimate_minutes: number | null;
  story_points: number | null;
  executor: string | null;
  sprint_id: string | null;
  folder_id: string | null;
  rank: string | null;
  target_repo: string | null;
  target_repos: string;
  target_repositories: string;
  labels: string;
  components: string;
  deliveries: string;
  extra: string;
  comment_count: number;
  version: number;
  archived_at: string | null;
  created_at: string;
  updated_at: string;
  /** Joined in by the queries that need it. */
  parent_key?: string | null;
}

/** Columns of `w` plus its parent's key, for every query that renders rows. */
export const ROW_COLUMNS = 'w.*, (SELECT p.key FROM work_items p WHERE p.id = w.parent_id) AS parent_key';

export function rowById(db: Database, id: string): WorkItemRow | undefined {
  return db.prepare(`SELECT ${ROW_COLUMNS} FROM work_items w WHERE w.id = ?`).get(id) as WorkItemRow | undefined;
}

export function rowByKey(db: Database, key: string): WorkItemRow | undefined {
  return db.prepare(`SELECT ${ROW_COLUMNS} FROM work_items w WHERE w.key = ?`).get(key) as WorkItemRow | undefined;
}

/** Rows by id, in one query (ids may be many: chunked under SQLite's parameter limit). */
export function rowsByIds(db: Database, ids: readonly string[]): Map<string, WorkItemRow> {
  const out = new Map<string, WorkItemRow>();
  for (let i = 0; i < ids.length; i += 500) {
    const chunk = ids.slice(i, i + 500);
    const rows = db
      .prepare(`SELECT ${ROW_COLUMNS} FROM work_items w WHERE w.id IN (${chunk.map(() => '?').join(',')})`)
      .all(...chunk) as unknown as WorkItemRow[];
    for (const r of rows) out.set(r.id, r);
  }
  return out;
}

interface DepEdge {
  from_id: string;
  to_id: string;
  other_key: string;
  other_title: string;
  other_status: string;
  other_id: string;
}

/** blockedBy/blocks of every item in `ids`, from one pass over the links. */
export function dependenciesOf(db: Database, ids: readonly string[]): Map<string, Dependencies> {
  const out = new Map<string, Dependencies>();
  for (const id of ids) out.set(id, { blockedBy: [], blocks: [] });
  for (let i = 0; i < ids.length; i += 400) {
    const chunk = ids.slice(i, i + 400);
    const marks = chunk.map(() => '?').join(',');
    const edges = db
      .prepare(
        `SELECT l.from_id, l.to_id, o.id AS other_id, o.key AS other_key, o.title AS other_title, o.status AS other_status
           FROM work_item_links l JOIN work_items o ON o.id = l.from_id
          WHERE l.kind = 'blocks' AND l.to_id IN (${marks})
         UNION ALL
         SELECT l.from_id, l.to_id, o.id, o.key, o.title, o.status
           FROM work_item_links l JOIN work_items o ON o.id = l.to_id
          WHERE l.kind = 'blocks' AND l.from_id IN (${marks})
          ORDER BY 4`,
      )
      .all(...chunk, ...chunk) as unknown as DepEdge[];
    for (const e of edges) {
      // No statusCategory here: the contract document closes DependencyRef to {key, title, status}.
      const ref: DependencyRef = { key: e.other_key, title: e.other_title, status: e.other_status };
      // The same edge is seen from both ends when both are in the chunk; each end files it once.
      if (e.other_id === e.from_id) out.get(e.to_id)?.blockedBy.push(ref);
      else out.get(e.from_id)?.blocks.push(ref);
    }
  }
  return out;
}

export function toSummary(row: WorkItemRow, deps: Dependencies | undefined): WorkItemSummary {
  return {
    key: row.key,
    kind: row.kind,
    type: row.type,
    title: row.title,
    status: row.status,
    statusCategory: categoryOf(row.status),
    priority: row.priority,
    assigneeId: row.assignee_id,
    reporterId: row.reporter_id,
    dueDate: row.due_date,
    estimateMinutes: row.estimate_minutes,
    storyPoints: row.story_points,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    dependencies: deps ?? { blockedBy: [], blocks: [] },
  };
}

/** Summaries of rows, their dependencies loaded in one go. */
export function summariesOf(db: Database, rows: readonly WorkItemRow[]): WorkItemSummary[] {
  const deps = dependenciesOf(
    db,
    rows.map((r) => r.id),
  );
  return rows.map((r) => toSummary(r, deps.get(r.id)));
}

export function toLinkItem(row: WorkItemRow): LinkItem {
  return {
    key: row.key,
    kind: row.kind,
    title: row.title,
    status: row.status,
    statusCategory: categoryOf(row.status),
    priority: row.priority,
    assigneeId: row.assignee_id,
    estimateMinutes: row.estimate_minutes,
    storyPoints: row.story_points,
    parentKey: row.parent_key ?? null,
    archived: row.archived_at !== null,
  };
}

export function toChildItem(row: WorkItemRow, deps: Dependencies | undefined): ChildItem {
  return { ...toLinkItem(row), dependencies: deps ?? { blockedBy: [], blocks: [] } };
}
