// What the ready index (model.ts) must read again: TEMP triggers on this connection call a function
// of ours with the id of every work item whose readiness inputs a write touched, and the blocked
// side of every link written, whoever writes (a route, the admin API, another module, raw SQL).
// TEMP objects: the stored schema and data stay exactly what they were. Commits of other
// connections are seen through `PRAGMA data_version` instead (model.ts rebuilds then).
//
// A mark is only "read this row again": a write that rolls back leaves a mark whose re-read finds
// the row as it was, so marks never need to be exact, only never missing.
import type { Database } from '../db.js';

export interface ReadyChanges {
  /** Work items whose own row changed (or appeared, or went). */
  items: Set<string>;
  /** Work items whose incoming `blocks` links changed. */
  blocked: Set<string>;
  /** Writes seen since the connection opened (statistics are refreshed every so many). */
  writes: number;
}

const changes = new WeakMap<Database, ReadyChanges>();

/** The columns readiness, the lanes' filters and their order are computed from. */
export const READY_COLUMNS = ['project_id', 'parent_id', 'kind', 'status', 'archived_at', 'priority', 'created_at', 'key', 'assignee_id', 'sprint_id'];

export function trackReadyChanges(db: Database): void {
  const c: ReadyChanges = { items: new Set(), blocked: new Set(), writes: 0 };
  changes.set(db, c);
  db.function('svc_ready_mark', { deterministic: false, directOnly: true }, (what: unknown, id: unknown) => {
    c.writes++;
    if (typeof id === 'string') (what === 'link' ? c.blocked : c.items).add(id);
    return null;
  });
  const item = (op: string, row: string, when = '') =>
    `CREATE TEMP TRIGGER IF NOT EXISTS work_items_${op.split(' ')[0]!.toLowerCase()}_ready AFTER ${op} ON main.work_items ${when}
     BEGIN SELECT svc_ready_mark('item', ${row}.id); END;`;
  const link = (op: string) =>
    `CREATE TEMP TRIGGER IF NOT EXISTS work_item_links_${op.toLowerCase()}_ready AFTER ${op} ON main.work_item_links
     BEGIN ${op === 'INSERT' ? '' : "SELECT svc_ready_mark('link', OLD.to_id);"} ${op === 'DELETE' ? '' : "SELECT svc_ready_mark('link', NEW.to_id);"} END;`;
  db.exec(
    [
      item('INSERT', 'NEW'),
      // Any column: a title write costs one row read again, and counts towards the statistics.
      item('UPDATE', 'NEW'),
      item('DELETE', 'OLD'),
      link('INSERT'),
      link('UPDATE'),
      link('DELETE'),
    ].join('\n'),
  );
}

/** This connection's marks, or null for a store not opened through openDatabase. */
export function readyChangesOf(db: Database): ReadyChanges | null {
  return changes.get(db) ?? null;
}
