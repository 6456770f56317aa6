// Kind-legal parents (docs/service.md). The contract only says a parent must be "kind-legal" and
// in the same project; the local service fixes:
//   epic    — no parent
//   story   — an epic, or none
//   task    — an epic, or none
//   bug     — an epic or a story, or none
//   subtask — a story, a task or a bug; required
import type { Kind } from '../../contract/types.js';
import type { Database } from '../db.js';
import { invalid } from '../kernel.js';
import type { WorkItemRow } from './rows.js';

export const LEGAL_PARENTS: Record<Kind, readonly Kind[]> = {
  epic: [],
  story: ['epic'],
  task: ['epic'],
  bug: ['epic', 'story'],
  subtask: ['story', 'task', 'bug'],
};

/** Throws a 422 unless `parent` may hold an item of `kind` in `projectId` (self = the item moved). */
export function checkPlacement(db: Database, kind: Kind, parent: WorkItemRow | null, projectId: string, selfId?: string): void {
  const legal = LEGAL_PARENTS[kind];
  if (!parent) {
    if (kind === 'subtask') throw invalid('parentKey: a subtask needs a parent (a story, task or bug)');
    return;
  }
  if (parent.project_id !== projectId) throw invalid(`parentKey: ${parent.key} is in another project`);
  if (parent.archived_at !== null) throw invalid(`parentKey: ${parent.key} is archived`);
  if (!legal.includes(parent.kind as Kind)) {
    throw invalid(`parentKey: a ${kind} cannot sit under a ${parent.kind} (${legal.length ? `allowed: ${legal.join(', ')}` : 'it takes no parent'})`);
  }
  if (selfId) {
    // Walking up from the new parent must never reach the item itself.
    let cur: string | null = parent.id;
    while (cur) {
      if (cur === selfId) throw invalid(`parentKey: ${parent.key} is the item itself or beneath it`);
      cur = (db.prepare('SELECT parent_id FROM work_items WHERE id = ?').get(cur) as { parent_id: string | null } | undefined)?.parent_id ?? null;
    }
  }
}

/** Throws a 422 when changing an item's kind would leave one of its children under an illegal parent. */
export function checkChildrenFit(db: Database, selfId: string, newKind: Kind): void {
  const kinds = db.prepare('SELECT DISTINCT kind FROM work_items WHERE parent_id = ?').all(selfId) as { kind: Kind }[];
  for (const { kind } of kinds) {
    if (!LEGAL_PARENTS[kind]?.includes(newKind)) throw invalid(`kind: a ${newKind} cannot hold its existing ${kind} children`);
  }
}
