// The ready set, kept up to date on write (docs/service.md "Ready lanes"): every work item's
// readiness inputs live here, and per project the three sets the lanes are read from: ready leaves
// that are bug work (strict, and with allowSoftBlock), and ready leaves that are not. A write marks
// the rows it touched (changes.ts); the next lane request reads just those rows again and
// re-evaluates the items whose verdict they can change: the row itself, its subtree (the
// parent-ready cascade, bug work), its old and new parent (leaf or not) and what it blocks. The
// whole store is read once, and again only after another connection committed.
import type { Database } from '../db.js';
import { inLanes, isDone } from '../work-items/status.js';
import { READY_COLUMNS, readyChangesOf, type ReadyChanges } from './changes.js';

export interface ItemNode {
  id: string;
  projectId: string;
  parentId: string | null;
  kind: string;
  done: boolean;
  /** Open but left out of the lanes (in review: the work exists). */
  outOfLanes: boolean;
  archived: boolean;
  priority: string;
  createdAt: string;
  key: string;
  assigneeId: string | null;
  sprintId: string | null;
  children: Set<string>;
  /** Items with a `blocks` link to this one, and the items this one blocks. */
  blockers: Set<string>;
  blocks: Set<string>;
}

export interface ProjectSets {
  bugLeaves: Set<string>;
  bugLeavesSoft: Set<string>;
  otherLeaves: Set<string>;
  /** Per parent, how many of its children are in otherLeaves (ready/containers' readyLeafCount);
   * and the parent each was counted under, which a later move must not lose track of. */
  perParent: Map<string, number>;
  countedUnder: Map<string, string>;
}

/** Deeper than any real tree; a parent cycle written by raw SQL must not hang the service. */
const MAX_DEPTH = 256;
/** More marks than this since the last request: reading the whole store is the cheaper way. */
const REBUILD_AFTER_MARKS = 5000;

interface Row {
  id: string;
  project_id: string;
  parent_id: string | null;
  kind: string;
  status: string;
  archived_at: string | null;
  priority: string;
  created_at: string;
  key: string;
  assignee_id: string | null;
  sprint_id: string | null;
}

export class ReadyIndex {
  readonly nodes = new Map<string, ItemNode>();
  private readonly projects = new Map<string, ProjectSets>();
  private readonly rowById;
  private readonly blockersOf;
  private readonly dataVersion;
  private syncedVersion = -1;

  constructor(
    private readonly db: Database,
    private readonly changes: ReadyChanges,
  ) {
    this.rowById = db.prepare(`SELECT id, ${READY_COLUMNS.join(', ')} FROM work_items WHERE id = ?`);
    this.blockersOf = db.prepare(`SELECT from_id AS id FROM work_item_links WHERE to_id = ? AND kind = 'blocks'`);
    this.dataVersion = db.prepare('PRAGMA data_version');
  }

  sets(projectId: string): ProjectSets {
    let s = this.projects.get(projectId);
    if (!s) {
      s = { bugLeaves: new Set(), bugLeavesSoft: new Set(), otherLeaves: new Set(), perParent: new Map(), countedUnder: new Map() };
      this.projects.set(projectId, s);
    }
    return s;
  }

  /** Brings the index up to the store's current state (call outside a transaction). */
  sync(): void {
    const version = (this.dataVersion.get() as { data_version: number }).data_version;
    if (version !== this.syncedVersion) {
      this.rebuild();
      this.syncedVersion = version;
      return;
    }
    const marks = this.changes.items.size + this.changes.blocked.size;
    if (marks === 0) return;
    // A bulk load (an import, a seed) is read faster whole than row by row.
    if (marks > REBUILD_AFTER_MARKS) return this.rebuild();
    const touched = new Set<string>();
    const items = [...this.changes.items];
    const blocked = [...this.changes.blocked];
    this.changes.items.clear();
    this.changes.blocked.clear();
    for (const id of items) this.reread(id, touched);
    for (const id of blocked) this.rereadBlockers(id, touched);
    for (const id of touched) this.evaluate(id);
  }

  private rebuild(): void {
    this.changes.items.clear();
    this.changes.blocked.clear();
    this.nodes.clear();
    this.projects.clear();
    const rows = this.db.prepare(`SELECT id, ${READY_COLUMNS.join(', ')} FROM work_items`).all() as unknown as Row[];
    for (const r of rows) this.nodes.set(r.id, nodeOf(r));
    for (const n of this.nodes.values()) if (n.parentId) this.nodes.get(n.parentId)?.children.add(n.id);
    const links = this.db.prepare(`SELECT from_id, to_id FROM work_item_links WHERE kind = 'blocks'`).all() as { from_id: string; to_id: string }[];
    for (const l of links) {
      this.nodes.get(l.to_id)?.blockers.add(l.from_id);
      this.nodes.get(l.from_id)?.blocks.add(l.to_id);
    }
    for (const id of this.nodes.keys()) this.evaluate(id);
  }

  /** Reads one item's row again; marks every item whose verdict that can change. */
  private reread(id: string, touched: Set<string>): void {
    const old = this.nodes.get(id);
    const row = this.rowById.get(id) as unknown as Row | undefined;
    if (old) {
      this.subtree(id, touched);
      for (const b of old.blocks) this.subtree(b, touched);
      if (old.parentId) touched.add(old.parentId);
      if (old.parentId !== (row?.parent_id ?? null) && old.parentId) this.nodes.get(old.parentId)?.children.delete(id);
      if (!row || row.project_id !== old.projectId) this.drop(old);
    }
    if (!row) {
      if (old) this.nodes.delete(id);
      return;
    }
    const node = nodeOf(row);
    if (old) {
      node.children = old.children;
      node.blockers = old.blockers;
      node.blocks = old.blocks;
    } else {
      // A new item. Its children come after it (parent_id is a foreign key); links to it may be
      // in this same batch of marks, or written with foreign keys off: read them now.
      for (const b of this.blockersOf.all(id) as { id: string }[]) {
        node.blockers.add(b.id);
        this.nodes.get(b.id)?.blocks.add(id);
      }
    }
    this.nodes.set(id, node);
    if (node.parentId) {
      this.nodes.get(node.parentId)?.children.add(id);
      touched.add(node.parentId);
    }
    this.subtree(id, touched);
    for (const b of node.blocks) this.subtree(b, touched);
  }

  /** Reads the `blocks` links into one item again. */
  private rereadBlockers(id: string, touched: Set<string>): void {
    const node = this.nodes.get(id);
    if (!node) return;
    for (const b of node.blockers) this.nodes.get(b)?.blocks.delete(id);
    node.blockers = new Set((this.blockersOf.all(id) as { id: string }[]).map((b) => b.id));
    for (const b of node.blockers) this.nodes.get(b)?.blocks.add(id);
    this.subtree(id, touched);
  }

  private subtree(id: string, into: Set<string>): void {
    const stack = [id];
    while (stack.length) {
      const cur = stack.pop()!;
      if (into.has(cur) && cur !== id) continue;
      into.add(cur);
      const n = this.nodes.get(cur);
      if (n) for (const c of n.children) if (!into.has(c)) stack.push(c);
    }
  }

  private drop(node: ItemNode): void {
    const s = this.projects.get(node.projectId);
    s?.bugLeaves.delete(node.id);
    s?.bugLeavesSoft.delete(node.id);
    if (!s?.otherLeaves.delete(node.id)) return;
    const parent = s.countedUnder.get(node.id);
    if (parent === undefined) return;
    s.countedUnder.delete(node.id);
    const left = s.perParent.get(parent)! - 1;
    if (left === 0) s.perParent.delete(parent);
    else s.perParent.set(parent, left);
  }

  private openBlocked(n: ItemNode): boolean {
    for (const b of n.blockers) {
      const blocker = this.nodes.get(b);
      if (blocker && !blocker.done && !blocker.archived) return true;
    }
    return false;
  }

  /** An ancestor with an open blocker (the parent-ready cascade); and whether any ancestor is a bug. */
  private above(n: ItemNode): { cascade: boolean; underBug: boolean } {
    let cascade = false;
    let underBug = false;
    let cur = n.parentId ? this.nodes.get(n.parentId) : undefined;
    for (let depth = 0; cur && depth < MAX_DEPTH; depth++) {
      if (!cascade && this.openBlocked(cur)) cascade = true;
      if (cur.kind === 'bug') underBug = true;
      if (cascade && underBug) break;
      cur = cur.parentId ? this.nodes.get(cur.parentId) : undefined;
    }
    return { cascade, underBug };
  }

  /** The nearest strict ancestor of `n` that `pred` accepts. */
  walkUp(n: ItemNode, pred: (a: ItemNode) => boolean): ItemNode | undefined {
    let cur = n.parentId ? this.nodes.get(n.parentId) : undefined;
    for (let depth = 0; cur && depth < MAX_DEPTH; depth++) {
      if (pred(cur)) return cur;
      cur = cur.parentId ? this.nodes.get(cur.parentId) : undefined;
    }
    return undefined;
  }

  isLeaf(n: ItemNode): boolean {
    for (const c of n.children) if (!this.nodes.get(c)?.archived) return false;
    return true;
  }

  isBugwork(n: ItemNode): boolean {
    return n.kind === 'bug' || this.above(n).underBug;
  }

  private evaluate(id: string): void {
    const n = this.nodes.get(id);
    if (!n) return;
    this.drop(n);
    if (n.done || n.outOfLanes || n.archived || this.openBlocked(n) || !this.isLeaf(n)) return;
    const { cascade, underBug } = this.above(n);
    const s = this.sets(n.projectId);
    if (n.kind === 'bug' || underBug) {
      s.bugLeavesSoft.add(id);
      if (!cascade) s.bugLeaves.add(id);
    } else if (!cascade) {
      s.otherLeaves.add(id);
      if (n.parentId) {
        s.countedUnder.set(id, n.parentId);
        s.perParent.set(n.parentId, (s.perParent.get(n.parentId) ?? 0) + 1);
      }
    }
  }
}

function nodeOf(r: Row): ItemNode {
  return {
    id: r.id,
    projectId: r.project_id,
    parentId: r.parent_id,
    kind: r.kind,
    done: isDone(r.status),
    outOfLanes: !inLanes(r.status),
    archived: r.archived_at !== null,
    priority: r.priority,
    createdAt: r.created_at,
    key: r.key,
    assigneeId: r.assignee_id,
    sprintId: r.sprint_id,
    children: new Set(),
    blockers: new Set(),
    blocks: new Set(),
  };
}

const indexes = new WeakMap<Database, ReadyIndex>();

/** The store's ready index, current; null inside a transaction (its writes may yet roll back) or
 * for a store without change tracking: the caller computes in SQL then. */
export function readyIndexOf(db: Database): ReadyIndex | null {
  if (db.isTransaction) return null;
  let index = indexes.get(db);
  if (!index) {
    const changes = readyChangesOf(db);
    if (!changes) return null;
    indexes.set(db, (index = new ReadyIndex(db, changes)));
  }
  index.sync();
  return index;
}
