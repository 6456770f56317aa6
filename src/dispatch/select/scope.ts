// `run_scope KEY`: every live leaf beneath KEY in tree order, blockers first. Leaves that are done,
// human, or blocked by something outside the set are recorded with a skip reason.
import type { WorkItemDetail } from '../../contract/types.js';
import { baseSkipReason, markGated, newCard, openBlockerKeys, orderBlockersFirst } from './checks.js';
import { counted, SelectionError, type SelectDeps, type SelectedCard, type Selection, type SelectRequest } from './types.js';

/** A per-selection cache of item reads (ancestors are shared by many leaves). */
export function detailCache(deps: SelectDeps): (key: string) => Promise<WorkItemDetail | null> {
  const cache = new Map<string, Promise<WorkItemDetail | null>>();
  return (key) => {
    let hit = cache.get(key);
    if (!hit) {
      hit = deps.service.getWorkItem(key).catch((error: unknown) => {
        // An ancestor we may not read (another project) simply adds no blockers.
        if ((error as { status?: number }).status === 404) return null;
        throw error;
      });
      cache.set(key, hit);
    }
    return hit;
  };
}

/** The live leaves beneath `root`, depth first in child order; the root itself when it is a leaf. */
async function leavesBeneath(root: WorkItemDetail, detail: (key: string) => Promise<WorkItemDetail | null>): Promise<WorkItemDetail[]> {
  const live = root.children.filter((c) => !c.archived);
  if (live.length === 0) return [root];
  const out: WorkItemDetail[] = [];
  for (const child of live) {
    const item = await detail(child.key);
    if (item) out.push(...(await leavesBeneath(item, detail)));
  }
  return out;
}

/**
 * Applies the shared rules to an ordered set: base skips, blockers-first order, gating. Used by
 * run_scope and by `continue` of a scoped run.
 */
export async function settleSet(
  items: WorkItemDetail[],
  detail: (key: string) => Promise<WorkItemDetail | null>,
  doneStatuses?: readonly string[],
  exclude: ReadonlySet<string> = new Set(),
): Promise<SelectedCard[]> {
  const cards = items.map((item) => newCard(item, baseSkipReason(item, doneStatuses) ?? (exclude.has(item.key) ? 'already in another running run' : null)));
  // The parent-ready cascade: an ancestor's open blockers hold its leaves back too.
  const inherited = new Map<string, string[]>();
  for (const card of cards) {
    const keys: string[] = [];
    for (const a of card.item.ancestorKeys) {
      const ancestor = await detail(a);
      if (ancestor) keys.push(...openBlockerKeys(ancestor, doneStatuses));
    }
    inherited.set(card.key, keys);
  }
  const ordered = orderBlockersFirst(cards, (c) => inherited.get(c.key) ?? [], doneStatuses);
  await markGated(ordered, detail, doneStatuses);
  return ordered;
}

export async function selectScope(req: SelectRequest, deps: SelectDeps): Promise<Selection> {
  const key = req.keys[0];
  if (!key || req.keys.length !== 1) throw new SelectionError('run_scope takes exactly one KEY');
  const detail = detailCache(deps);
  const root = await deps.service.getWorkItem(key);
  const exclude = req.exclude ?? new Set<string>();
  const leaves = (await leavesBeneath(root, detail)).filter((l) => !l.archivedAt);
  const cards = await settleSet(leaves, detail, req.doneStatuses, exclude);
  const runnable = cards.filter((c) => !c.skipReason).length;
  return {
    command: 'run_scope',
    originalCommand: 'run_scope',
    cards,
    scopeKey: key,
    mode: 'implement',
    closeOut: true,
    capped: false,
    empty: runnable === 0,
    note: `${runnable} of ${counted(cards.length, 'leaf card')} beneath ${key}`,
  };
}
