// The ready lanes (docs/service.md "Ready lanes"). The ready set is computed in SQL (one statement
// over the project, see work-items/query.ts); grouping and ordering happen in one pass here.
//
// - Bug work is a bug and anything beneath one. ready/bugs holds the ready leaves that are bug
//   work, grouped: a ready childless bug alone (`container: null`), the ready leaves beneath a bug
//   under that bug. The leaves lane (not among the 31 operations) holds the other ready leaves.
// - ready/containers: stories and tasks (never epics, never bug work) whose live children are all
//   childless and which hold at least one leaves-lane row. Its filters apply to the container's
//   own priority, assignee and sprint.
// - Groups and containers are ordered by priority (highest first), createdAt, key; the items of a
//   group by createdAt, key.
import type { LinkItem, ReadyBugGroup, ReadyContainer } from '../../contract/types.js';
import { PRIORITIES } from '../../contract/types.js';
import type { Database } from '../db.js';
import { ItemQuery } from '../work-items/query.js';
import { rowsByIds, summariesOf, toLinkItem, type WorkItemRow } from '../work-items/rows.js';
import { DONE_SQL, IN_LANES_SQL } from '../work-items/status.js';
import type { LaneParams } from './params.js';

const priorityRank = (p: string) => {
  const i = (PRIORITIES as readonly string[]).indexOf(p);
  return i < 0 ? -1 : i;
};

/** Highest priority first, then oldest, then key. */
export function laneOrder(a: WorkItemRow, b: WorkItemRow): number {
  return priorityRank(b.priority) - priorityRank(a.priority) || a.created_at.localeCompare(b.created_at) || a.key.localeCompare(b.key, 'en', { numeric: true });
}

const marks = (n: number) => Array.from({ length: n }, () => '?').join(',');

/** Applies the item-level lane filters (priority, assignee, sprint) to `w`. */
function whereOwn(q: ItemQuery, p: Pick<LaneParams, 'priorities' | 'assignee' | 'sprintId'>): void {
  if (p.priorities.length) q.where(`w.priority IN (${marks(p.priorities.length)})`, p.priorities);
  if (p.assignee === 'none') q.where('w.assignee_id IS NULL');
  else if (p.assignee) q.where('w.assignee_id = ?', [p.assignee]);
  // Direct membership only: an item is in a sprint when its own sprint is that one.
  if (p.sprintId) q.where('w.sprint_id = ?', [p.sprintId]);
}

/** Ready leaves of the project: bug work (bugs lane) or not (the leaves lane). */
function readyLeaves(db: Database, projectId: string, bugwork: boolean, soft: boolean, extra?: (q: ItemQuery) => void): WorkItemRow[] {
  const q = new ItemQuery(projectId);
  q.where(q.readySql(soft));
  q.where(IN_LANES_SQL);
  q.where(q.leafSql());
  q.where(bugwork ? q.bugworkSql() : `NOT ${q.bugworkSql()}`);
  extra?.(q);
  return q.rows(db, 'ORDER BY w.created_at, w.id');
}

/** Nearest bug at or above each item (items are bug work, so one exists). */
function nearestBugs(db: Database, rows: WorkItemRow[]): Map<string, WorkItemRow> {
  const known = new Map<string, WorkItemRow>(rows.map((r) => [r.id, r]));
  const out = new Map<string, WorkItemRow>();
  let pending = rows.filter((r) => r.kind !== 'bug');
  const cursor = new Map<string, string | null>(pending.map((r) => [r.id, r.parent_id]));
  // Walk up one level per round for every pending item at once: a few queries, never one per row.
  while (pending.length) {
    const missing = [...new Set(pending.map((r) => cursor.get(r.id)).filter((id): id is string => !!id && !known.has(id)))];
    for (const [id, row] of rowsByIds(db, missing)) known.set(id, row);
    const next: WorkItemRow[] = [];
    for (const r of pending) {
      const up = cursor.get(r.id);
      const parent = up ? known.get(up) : undefined;
      if (!parent) continue;
      if (parent.kind === 'bug') out.set(r.id, parent);
      else {
        cursor.set(r.id, parent.parent_id);
        next.push(r);
      }
    }
    pending = next;
  }
  return out;
}

/** A ready/bugs group before rendering: rows only, so a page renders just its own groups. */
export interface BugGroupRows {
  head: WorkItemRow;
  container: WorkItemRow | null;
  items: WorkItemRow[];
}

export function readyBugGroups(db: Database, projectId: string, p: LaneParams): BugGroupRows[] {
  const leaves = readyLeaves(db, projectId, true, p.soft, (q) => {
    if (p.kinds.length) q.where(`w.kind IN (${marks(p.kinds.length)})`, p.kinds);
    whereOwn(q, p);
    if (p.ancestorIds.length) q.where(q.beneathSql(p.ancestorIds));
  });
  const bugs = nearestBugs(db, leaves);
  const groups = new Map<string, BugGroupRows>();
  for (const leaf of leaves) {
    const container = leaf.kind === 'bug' ? null : (bugs.get(leaf.id) ?? null);
    const head = container ?? leaf;
    const g = groups.get(head.id) ?? { head, container, items: [] };
    g.items.push(leaf);
    groups.set(head.id, g);
  }
  return [...groups.values()].sort((a, b) => laneOrder(a.head, b.head));
}

/** Wire shape of groups; the summaries' dependencies are loaded in one query for the page. */
export function renderBugGroups(db: Database, groups: BugGroupRows[]): ReadyBugGroup[] {
  const rows = groups.flatMap((g) => g.items);
  const summaries = new Map(summariesOf(db, rows).map((sum, i) => [rows[i]!.id, sum]));
  return groups.map((g) => ({
    container: g.container ? (toLinkItem(g.container) as LinkItem) : null,
    items: g.items.map((i) => summaries.get(i.id)!),
  }));
}

export function readyContainers(db: Database, projectId: string, p: LaneParams): ReadyContainer[] {
  // Only the count of leaves-lane rows per parent is needed here, not the rows themselves.
  const lq = new ItemQuery(projectId);
  lq.where(lq.readySql());
  lq.where(IN_LANES_SQL);
  lq.where(lq.leafSql());
  lq.where(`NOT ${lq.bugworkSql()}`);
  lq.where('w.parent_id IS NOT NULL');
  const stmt = lq.build('w.parent_id AS id, COUNT(*) AS n', 'GROUP BY w.parent_id');
  const perParent = new Map((db.prepare(stmt.sql).all(...stmt.params) as { id: string; n: number }[]).map((r) => [r.id, r.n]));
  const parentIds = [...perParent.keys()];
  if (parentIds.length === 0) return [];

  const q = new ItemQuery(projectId);
  q.where(`w.kind IN ('story', 'task')`);
  q.where(`w.status NOT IN ${DONE_SQL}`);
  q.where('w.archived_at IS NULL');
  q.where(`NOT ${q.bugworkSql()}`);
  // Runnable as one parent run: no live child has live children of its own.
  q.where(`NOT EXISTS (SELECT 1 FROM work_items c JOIN work_items g ON g.parent_id = c.id AND g.archived_at IS NULL
                        WHERE c.parent_id = w.id AND c.archived_at IS NULL)`);
  q.where(`w.id IN (SELECT value FROM json_each(?))`, [JSON.stringify(parentIds)]);
  whereOwn(q, p);
  const containers = q.rows(db).sort(laneOrder);
  if (containers.length === 0) return [];
  const counts = new Map(
    (
      db
        .prepare(
          `SELECT parent_id AS id, COUNT(*) AS n FROM work_items
            WHERE parent_id IN (SELECT value FROM json_each(?)) AND archived_at IS NULL GROUP BY parent_id`,
        )
        .all(JSON.stringify(containers.map((c) => c.id))) as { id: string; n: number }[]
    ).map((r) => [r.id, r.n]),
  );
  return containers.map((c) => ({ ...toLinkItem(c), readyLeafCount: perParent.get(c.id) ?? 0, childCount: counts.get(c.id) ?? 0 }));
}
