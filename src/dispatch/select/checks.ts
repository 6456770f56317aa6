// The per-card rules every command shares (docs/dispatch.md): done, archived and human cards are
// recorded with a skip reason; blockers inside the set order the legs; a human card of the set that
// blocks a later card (directly or through an ancestor) gates the run there.
import type { WorkItemDetail } from '../../contract/types.js';
import { DEFAULT_DONE_STATUSES, type SelectedCard } from './types.js';

/** Anything with a status (summary, link, child, dependency item). */
interface HasStatus {
  status: string;
  statusCategory?: string;
}

const normalise = (s: string): string => s.trim().toLowerCase().replace(/[_-]+/g, ' ').replace(/[’`]/g, "'");

/** Done by `statusCategory` where the service sends it, else by the configured status names. */
export function isDone(item: HasStatus, doneStatuses: readonly string[] = DEFAULT_DONE_STATUSES): boolean {
  if (typeof item.statusCategory === 'string') return item.statusCategory === 'done';
  const status = normalise(item.status);
  return doneStatuses.some((d) => normalise(d) === status || normalise(d).replace(/'/g, '') === status.replace(/'/g, ''));
}

/** The reason a card is never given to an agent, whatever the command; null when it may run. */
export function baseSkipReason(item: WorkItemDetail, doneStatuses?: readonly string[]): string | null {
  if (item.archivedAt) return 'archived';
  if (isDone(item, doneStatuses)) return `done (status ${item.status})`;
  if (item.executor === 'human') return 'executor: human';
  return null;
}

/** The keys of the item's blockers that are not done. */
export function openBlockerKeys(item: WorkItemDetail, doneStatuses?: readonly string[]): string[] {
  return item.links.blockedBy.filter((b) => !b.archived && !isDone(b, doneStatuses)).map((b) => b.key);
}

export function newCard(item: WorkItemDetail, skipReason: string | null = null): SelectedCard {
  return { key: item.key, title: item.title, item, skipReason, after: [], gatedBy: null };
}

/**
 * Marks `gatedBy` on every runnable card blocked by a human card of the set: directly, through one
 * of its ancestors, or by an ancestor of the human card. `detail` reads (cached) ancestors.
 */
export async function markGated(
  cards: SelectedCard[],
  detail: (key: string) => Promise<WorkItemDetail | null>,
  doneStatuses?: readonly string[],
): Promise<void> {
  const humans = cards.filter((c) => c.item.executor === 'human' && !isDone(c.item, doneStatuses) && !c.item.archivedAt);
  if (humans.length === 0) return;
  for (const card of cards) {
    if (card.skipReason) continue;
    const blockers = new Set(openBlockerKeys(card.item, doneStatuses));
    for (const ancestorKey of card.item.ancestorKeys) {
      const ancestor = await detail(ancestorKey);
      if (ancestor) for (const k of openBlockerKeys(ancestor, doneStatuses)) blockers.add(k);
    }
    const gate = humans.find((h) => h.key !== card.key && (blockers.has(h.key) || h.item.ancestorKeys.some((a) => blockers.has(a))));
    if (gate) card.gatedBy = gate.key;
  }
}

/**
 * Orders a card set blockers first (stable: tree order wherever the blockers allow) and skips
 * what cannot run: a card blocked by something outside the set that is not done, or by a card of
 * the set that is itself skipped (human blockers gate instead), or caught in a blocker cycle.
 * `ancestorBlockers` gives the open blockers of the card's ancestors (the parent-ready cascade).
 */
export function orderBlockersFirst(
  cards: SelectedCard[],
  ancestorBlockers: (card: SelectedCard) => string[],
  doneStatuses?: readonly string[],
): SelectedCard[] {
  const byKey = new Map(cards.map((c) => [c.key, c]));
  const human = (k: string) => byKey.get(k)?.item.executor === 'human';
  for (const card of cards) {
    if (card.skipReason) continue;
    const own = openBlockerKeys(card.item, doneStatuses);
    const inherited = ancestorBlockers(card);
    const after: string[] = [];
    for (const k of [...own, ...inherited]) {
      if (k === card.key) continue;
      if (byKey.has(k)) {
        if (!human(k) && !after.includes(k)) after.push(k);
      } else {
        card.skipReason = own.includes(k) ? `blocked by ${k} (not done, not in this set)` : `not ready: an ancestor is blocked by ${k}`;
        break;
      }
    }
    card.after = after;
  }
  // A card waiting on a skipped card of the set cannot run either; repeat until nothing changes.
  for (let changed = true; changed; ) {
    changed = false;
    for (const card of cards) {
      if (card.skipReason) continue;
      const dead = card.after.find((k) => byKey.get(k)!.skipReason && !human(k));
      if (dead) {
        card.skipReason = `blocked by ${dead}, which is skipped`;
        changed = true;
      }
    }
  }
  // Kahn's algorithm, always taking the earliest card (in the given order) whose blockers are placed.
  const placed = new Set<string>();
  const out: SelectedCard[] = [];
  const rest = [...cards];
  while (rest.length > 0) {
    const i = rest.findIndex((c) => c.skipReason !== null || c.after.every((k) => placed.has(k)));
    if (i === -1) {
      const stuck = rest.map((r) => r.key).join(', ');
      for (const c of rest) c.skipReason ??= `blocker cycle among ${stuck}`;
      out.push(...rest);
      break;
    }
    const [next] = rest.splice(i, 1);
    placed.add(next!.key);
    out.push(next!);
  }
  return out;
}
