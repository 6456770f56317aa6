// The lane commands: `batch`/`auto` pick ready leaves through listWorkItems's filter grammar, `next` takes
// the first runnable container (as run_scope) or else the first group of ready bug work.
import type { WorkItemDetail } from '../../contract/types.js';
import { baseSkipReason, newCard } from './checks.js';
import { selectScope } from './scope.js';
import { counted, type LaneFilters, type SelectDeps, type SelectedCard, type Selection, type SelectRequest } from './types.js';

/** Quotes a filter value when the grammar needs it (whitespace, commas, quotes). */
function value(v: string): string {
  return /^[^\s,"]+$/.test(v) ? v : `"${v.replace(/["\\]/g, (c) => `\\${c}`)}"`;
}

/** The ready-leaves filter (the leaves lane is not among the 31 operations) plus lane clauses. */
export function readyLeavesFilter(lanes: LaneFilters = {}): string {
  const clauses = ['ready:true', 'leaf:true', 'bugwork:false'];
  const list = (field: string, values?: string[]) => {
    if (values && values.length > 0) clauses.push(`${field}:${values.map(value).join(',')}`);
  };
  list('priority', lanes.priority);
  list('kind', lanes.kind);
  list('ancestor', lanes.ancestor);
  if (lanes.assignee) clauses.push(`assignee:${value(lanes.assignee)}`);
  if (lanes.sprint) clauses.push(`sprint:${value(lanes.sprint)}`);
  return clauses.join(' ');
}

/** `xs` from index `at` on, then the ones before it. */
const rotate = <T>(xs: T[], at: number): T[] => [...xs.slice(at), ...xs.slice(0, at)];

/**
 * A fleet worker's first page (docs/fleets.md, "Which card a worker reaches for"): without the
 * cards another machine's work on origin covers (no item read for them: in a fleet most of the
 * page soon is), from a random one of the rest on. Starting at a random row and walking past the
 * covered ones made the card after each run of them every worker's pick.
 */
async function spreadRows<R extends { key: string }>(rows: R[], deps: SelectDeps): Promise<{ rows: R[]; covered: number }> {
  const covered = (await deps.pushedElsewhere?.(rows.map((r) => r.key))) ?? new Set<string>();
  const rest = rows.filter((r) => !covered.has(r.key));
  return { rows: rotate(rest, Math.floor(Math.random() * rest.length)), covered: covered.size };
}

/**
 * `batch` (and each round of `auto`): the ready leaves in the service's order, up to `max` cards
 * given to agents. Human cards are recorded with their reason and do not count against the cap.
 */
export async function selectBatch(req: SelectRequest, deps: SelectDeps): Promise<Selection> {
  const max = req.max ?? Number.POSITIVE_INFINITY;
  const exclude = req.exclude ?? new Set<string>();
  const filter = readyLeavesFilter(req.lanes);
  deps.selectionStarts?.();
  const cards: SelectedCard[] = [];
  let runnable = 0;
  let capped = false;
  let cursor: string | undefined;
  let covered = 0;
  outer: do {
    const page = await deps.service.listWorkItems(req.projectKey, { filter, limit: 100, ...(cursor ? { cursor } : {}) });
    let rows = page.items.filter((row) => !exclude.has(row.key));
    if (req.spread && !cursor) ({ rows, covered } = await spreadRows(rows, deps));
    for (const row of rows) {
      if (runnable >= max) {
        capped = true;
        break outer;
      }
      const item = await deps.service.getWorkItem(row.key);
      const skip = baseSkipReason(item, req.doneStatuses) ?? (await deps.priorWork?.(item)) ?? null;
      cards.push(newCard(item, skip));
      if (!skip) runnable++;
    }
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return {
    command: req.command,
    originalCommand: req.command,
    cards,
    scopeKey: null,
    mode: 'implement',
    closeOut: false,
    capped,
    empty: runnable === 0,
    note:
      runnable > 0
        ? `${counted(runnable, 'ready leaf card')}${capped ? ` (capped at ${max})` : ''}`
        : cards.length + covered > 0
          ? `no ready leaves left to run: ${cards.length + covered} skipped (--dry-run shows why${deps.priorWork ? '; --rerun picks work already done' : ''})`
          : 'no ready leaves',
  };
}

/**
 * Marks the runnable cards of a scoped set that earlier work already covers. Their work exists on
 * their branches, so cards waiting on them inside the set are not held back by them.
 */
async function skipPriorWork(selection: Selection, deps: SelectDeps): Promise<Selection> {
  if (!deps.priorWork) return selection;
  const done = new Set<string>();
  for (const card of selection.cards) {
    if (card.skipReason) continue;
    const why = await deps.priorWork(card.item);
    if (why) {
      card.skipReason = why;
      done.add(card.key);
    }
  }
  if (done.size === 0) return selection;
  for (const card of selection.cards) card.after = card.after.filter((k) => !done.has(k));
  const runnable = selection.cards.filter((c) => !c.skipReason).length;
  return { ...selection, empty: runnable === 0 };
}

/** `next`: the first runnable container as run_scope, else the first group of ready bug work. */
export async function selectNext(req: SelectRequest, deps: SelectDeps): Promise<Selection> {
  const lanes = req.lanes ?? {};
  const laneQuery = {
    ...(lanes.priority?.length ? { priority: lanes.priority } : {}),
    ...(lanes.assignee ? { assigneeId: lanes.assignee } : {}),
    ...(lanes.sprint ? { sprintId: lanes.sprint } : {}),
  };
  const exclude = req.exclude ?? new Set<string>();
  deps.selectionStarts?.();
  const containers = await deps.service.listReadyContainers(req.projectKey, { ...laneQuery, limit: 100 });
  for (const container of containers.items) {
    if (exclude.has(container.key)) continue;
    const scoped = await skipPriorWork(await selectScope({ ...req, keys: [container.key] }, deps), deps);
    // A container whose ready leaves were all taken by other runs (409 on open) is not the next unit.
    if (scoped.empty) continue;
    return { ...scoped, command: 'next', originalCommand: 'next', note: `next: container ${container.key} (${container.title})` };
  }
  const bugs = await deps.service.listReadyBugs(req.projectKey, { ...laneQuery, limit: 100 });
  for (const group of bugs.items) {
    const keys = group.items.map((i) => i.key).filter((k) => !exclude.has(k));
    if (keys.length === 0) continue;
    const items: WorkItemDetail[] = [];
    for (const key of keys) items.push(await deps.service.getWorkItem(key));
    const cards: SelectedCard[] = [];
    for (const item of items) cards.push(newCard(item, baseSkipReason(item, req.doneStatuses) ?? (await deps.priorWork?.(item)) ?? null));
    const scopeKey = group.container?.key ?? keys[0]!;
    return {
      command: 'next',
      originalCommand: 'next',
      cards,
      scopeKey,
      mode: 'implement',
      closeOut: false,
      capped: false,
      empty: cards.every((c) => c.skipReason),
      note: `next: bug work ${scopeKey}`,
    };
  }
  return {
    command: 'next',
    originalCommand: 'next',
    cards: [],
    scopeKey: null,
    mode: 'implement',
    closeOut: false,
    capped: false,
    empty: true,
    note: 'nothing is ready',
  };
}
