// The ready lanes read from the ready index (model.ts): the same rows, groups and order as the SQL
// of lanes.ts (which still answers inside a transaction), computed from the maintained sets; only
// the rows of the page asked for are then read from the store, to render.
import { PRIORITIES, type ReadyBugGroup, type ReadyContainer } from '../../contract/types.js';
import type { Database } from '../db.js';
import { rowsByIds, toLinkItem, type WorkItemRow } from '../work-items/rows.js';
import { renderBugGroups } from './lanes.js';
import type { ItemNode, ReadyIndex } from './model.js';
import type { LaneParams } from './params.js';

const text = new Intl.Collator();
const keys = new Intl.Collator('en', { numeric: true });
const rank = new Map<string, number>(PRIORITIES.map((p, i) => [p, i]));

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;
const binary = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
/** localeCompare of two createdAt values. Two ISO timestamps of one length differ first at a digit,
 * where the collation agrees with code units: compared as such, without ICU (most of a lane's CPU). */
function created(a: ItemNode, b: ItemNode): number {
  const [x, y] = [a.createdAt, b.createdAt];
  if (x === y) return 0;
  return x.length === y.length && ISO.test(x) && ISO.test(y) ? binary(x, y) : text.compare(x, y);
}

/** lanes.ts laneOrder over index nodes: highest priority first, then oldest, then key. */
function order(a: ItemNode, b: ItemNode): number {
  return (rank.get(b.priority) ?? -1) - (rank.get(a.priority) ?? -1) || created(a, b) || keys.compare(a.key, b.key);
}
/** The SQL's `ORDER BY created_at, id`: SQLite's binary collation. */
const byCreated = (a: ItemNode, b: ItemNode) => binary(a.createdAt, b.createdAt) || binary(a.id, b.id);

function ownFilter(p: Pick<LaneParams, 'priorities' | 'assignee' | 'sprintId'>): (n: ItemNode) => boolean {
  const priorities = p.priorities.length ? new Set(p.priorities) : null;
  return (n) =>
    (!priorities || priorities.has(n.priority)) &&
    (p.assignee === null || (p.assignee === 'none' ? n.assigneeId === null : n.assigneeId === p.assignee)) &&
    (!p.sprintId || n.sprintId === p.sprintId);
}

export interface IndexedGroup {
  head: ItemNode;
  container: ItemNode | null;
  items: ItemNode[];
}

export function indexedBugGroups(index: ReadyIndex, projectId: string, p: LaneParams): IndexedGroup[] {
  const s = index.sets(projectId);
  const own = ownFilter(p);
  const kinds = p.kinds.length ? new Set(p.kinds) : null;
  const ancestors = p.ancestorIds.length ? new Set(p.ancestorIds) : null;
  const leaves: ItemNode[] = [];
  for (const id of p.soft ? s.bugLeavesSoft : s.bugLeaves) {
    const n = index.nodes.get(id)!;
    if ((kinds && !kinds.has(n.kind)) || !own(n)) continue;
    if (ancestors && !index.walkUp(n, (a) => ancestors.has(a.id))) continue;
    leaves.push(n);
  }
  leaves.sort(byCreated);
  const groups = new Map<string, IndexedGroup>();
  for (const leaf of leaves) {
    const container = leaf.kind === 'bug' ? null : (index.walkUp(leaf, (a) => a.kind === 'bug') ?? null);
    const head = container ?? leaf;
    let g = groups.get(head.id);
    if (!g) groups.set(head.id, (g = { head, container, items: [] }));
    g.items.push(leaf);
  }
  return [...groups.values()].sort((a, b) => order(a.head, b.head));
}

export interface IndexedContainer {
  node: ItemNode;
  readyLeafCount: number;
  childCount: number;
}

export function indexedContainers(index: ReadyIndex, projectId: string, p: LaneParams): IndexedContainer[] {
  const own = ownFilter(p);
  const live = (id: string) => index.nodes.get(id)?.archived === false;
  const out: IndexedContainer[] = [];
  for (const [id, readyLeafCount] of index.sets(projectId).perParent) {
    const n = index.nodes.get(id);
    if (!n || n.projectId !== projectId || (n.kind !== 'story' && n.kind !== 'task') || n.done || n.archived) continue;
    if (!own(n) || index.isBugwork(n)) continue;
    // Runnable as one parent run: no live child has live children of its own.
    let childCount = 0;
    let nested = false;
    for (const c of n.children) {
      if (!live(c)) continue;
      childCount++;
      if (!nested) for (const g of index.nodes.get(c)!.children) if (live(g)) nested = true;
    }
    if (!nested) out.push({ node: n, readyLeafCount, childCount });
  }
  return out.sort((a, b) => order(a.node, b.node));
}

/** The page's groups with their rows read from the store, in the wire shape. */
export function renderIndexedGroups(db: Database, groups: IndexedGroup[]): ReadyBugGroup[] {
  const rows = rowsByIds(db, [...new Set(groups.flatMap((g) => [g.head.id, ...g.items.map((i) => i.id)]))]);
  const row = (n: ItemNode): WorkItemRow => rows.get(n.id)!;
  return renderBugGroups(
    db,
    groups.map((g) => ({ head: row(g.head), container: g.container ? row(g.container) : null, items: g.items.map(row) })),
  );
}

export function renderIndexedContainers(db: Database, containers: IndexedContainer[]): ReadyContainer[] {
  const rows = rowsByIds(
    db,
    containers.map((c) => c.node.id),
  );
  return containers.map((c) => ({ ...toLinkItem(rows.get(c.node.id)!), readyLeafCount: c.readyLeafCount, childCount: c.childCount }));
}
