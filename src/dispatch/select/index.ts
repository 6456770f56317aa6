// Card selection per command (docs/dispatch.md). The set is fixed when the run opens; everything here
// only reads. Named commands keep the user's order; run_scope and `next` order blockers first.
import { KEY_PATTERN, type DispatchCommand, type WorkItemDetail } from '../../contract/types.js';
import { baseSkipReason, markGated, newCard } from './checks.js';
import { selectBatch, selectNext } from './lanes.js';
import { detailCache, selectScope, settleSet } from './scope.js';
import { counted, SelectionError, type LegMode, type SelectDeps, type Selection, type SelectRequest } from './types.js';

export { isDone } from './checks.js';
export { readyLeavesFilter } from './lanes.js';
export * from './types.js';

export function modeOf(command: DispatchCommand): LegMode {
  return command === 'fix' ? 'fix' : command === 'review' ? 'review' : 'implement';
}

/** Why a named card does not qualify for fix/review, or null when it does. */
function commandSkip(command: DispatchCommand, item: WorkItemDetail): string | null {
  if (command === 'fix' && !item.deliveries.some((d) => d.state === 'open' && d.ci === 'failing')) {
    return 'no open delivery with ci: failing';
  }
  if (command === 'review' && !item.deliveries.some((d) => d.state === 'open')) return 'no open delivery';
  return null;
}

function checkKeys(keys: string[]): void {
  if (keys.length === 0) throw new SelectionError('name at least one KEY');
  const bad = keys.find((k) => !KEY_PATTERN.test(k));
  if (bad) throw new SelectionError(`not a work item key: ${bad}`);
  const seen = new Set<string>();
  for (const k of keys) {
    if (seen.has(k)) throw new SelectionError(`${k} is named twice`);
    seen.add(k);
  }
}

/** run / fix / review: exactly the named items, in the given order. */
async function selectNamed(req: SelectRequest, deps: SelectDeps, command: DispatchCommand): Promise<Selection> {
  checkKeys(req.keys);
  const exclude = req.exclude ?? new Set<string>();
  const items: WorkItemDetail[] = [];
  for (const key of req.keys) items.push(await deps.service.getWorkItem(key));
  const cards = items.map((item) =>
    newCard(item, baseSkipReason(item, req.doneStatuses) ?? commandSkip(command, item) ?? (exclude.has(item.key) ? 'already in another running run' : null)),
  );
  await markGated(cards, detailCache(deps), req.doneStatuses);
  const runnable = cards.filter((c) => !c.skipReason).length;
  return {
    command,
    originalCommand: command,
    cards,
    scopeKey: req.keys.length === 1 ? req.keys[0]! : null,
    mode: modeOf(command),
    closeOut: false,
    capped: false,
    empty: runnable === 0,
    note: `${runnable} of ${counted(cards.length, 'named card')}`,
  };
}

/** continue RUN_ID: the legs of that run that did not end `implemented`, as the original command. */
async function selectContinue(req: SelectRequest, deps: SelectDeps): Promise<Selection> {
  const runId = req.keys[0];
  if (!runId || req.keys.length !== 1) throw new SelectionError('continue takes exactly one RUN_ID');
  const run = await deps.service.getDispatchRun(runId);
  const local = deps.localRun?.(runId) ?? null;
  const original = (local?.originalCommand ?? run.command) as DispatchCommand;
  const scopeKey = local?.scopeKey ?? (run.scopeLabel && KEY_PATTERN.test(run.scopeLabel) ? run.scopeLabel : null);
  const keys = run.cards.filter((c) => c.disposition !== 'implemented').map((c) => c.workItemKey);
  const exclude = req.exclude ?? new Set<string>();
  const detail = detailCache(deps);
  const items: WorkItemDetail[] = [];
  for (const key of keys) {
    const item = await detail(key);
    if (item) items.push(item);
  }
  const scoped = original === 'run_scope' || original === 'next';
  const cards = scoped
    ? await settleSet(items, detail, req.doneStatuses, exclude)
    : items.map((item) =>
        newCard(
          item,
          baseSkipReason(item, req.doneStatuses) ?? commandSkip(original, item) ?? (exclude.has(item.key) ? 'already in another running run' : null),
        ),
      );
  if (!scoped) await markGated(cards, detail, req.doneStatuses);
  const runnable = cards.filter((c) => !c.skipReason).length;
  return {
    command: 'continue',
    originalCommand: original,
    cards,
    scopeKey,
    mode: modeOf(original),
    closeOut: original === 'run_scope' && scopeKey !== null,
    capped: false,
    empty: runnable === 0,
    note: `continue ${runId} (${original}): ${runnable} of ${counted(cards.length, 'card')} left`,
  };
}

/** The card set of one run of `req.command` (auto: one round, like batch). */
export async function selectCards(req: SelectRequest, deps: SelectDeps): Promise<Selection> {
  switch (req.command) {
    case 'run':
    case 'fix':
    case 'review':
      return selectNamed(req, deps, req.command);
    case 'run_scope':
      checkKeys(req.keys);
      return selectScope(req, deps);
    case 'next':
      return selectNext(req, deps);
    case 'batch':
    case 'auto':
      return selectBatch(req, deps);
    case 'continue':
      return selectContinue(req, deps);
    default:
      throw new SelectionError(`unknown dispatch command: ${String(req.command)}`);
  }
}
