// A run that is already open on the service (a hosted run): its card set is read from the run,
// not selected, and it is executed and closed as a run this client opened would be.
import { KEY_PATTERN, type DispatchCommand, type DispatchRun, type WorkItemDetail } from '../../contract/types.js';
import { openBlockerKeys } from '../select/checks.js';
import { modeOf } from '../select/index.js';
import { counted, type SelectedCard, type Selection } from '../select/types.js';
import { readRunRecord } from '../state/folder.js';
import { runExitCode } from './close-decision.js';
import { checkMaxCost, noRun } from './dispatch.js';
import { executeRun } from './execute.js';
import { deliverEarlierAttempt } from './local-state.js';
import type { DispatchDeps, DispatchOptions, RunSummary } from './types.js';

/** A leg still to run in an existing run: queued, or running (an earlier attempt crashed in it). */
const isOpenLeg = (disposition: string): boolean => disposition === 'queued' || disposition === 'running';

const COMMANDS: readonly DispatchCommand[] = ['next', 'run', 'run_scope', 'batch', 'auto', 'fix', 'continue', 'review'];

/**
 * The card set of a run that is already open (a hosted run): its legs still `queued` or `running`,
 * in the run's order, with their work items (`items`, read with the run's credential). Nothing is
 * selected: the run decided. Blockers inside the run order the legs as run_scope would, and a
 * blocker the run skipped as `executor: human` gates the legs behind it.
 */
export function selectionOfRun(
  run: DispatchRun,
  items: ReadonlyMap<string, WorkItemDetail>,
  opts: { originalCommand?: DispatchCommand; doneStatuses?: readonly string[] } = {},
): Selection {
  const command = (COMMANDS as readonly string[]).includes(run.command) ? (run.command as DispatchCommand) : 'run';
  const original = opts.originalCommand ?? command;
  const inRun = new Map(run.cards.map((c) => [c.workItemKey, c]));
  const scopeKey = run.scopeLabel && KEY_PATTERN.test(run.scopeLabel) ? run.scopeLabel : null;
  const cards: SelectedCard[] = [];
  const missing: string[] = [];
  for (const card of run.cards) {
    if (!isOpenLeg(card.disposition)) continue;
    const item = items.get(card.workItemKey);
    if (!item) {
      missing.push(card.workItemKey);
      continue;
    }
    const blockers = openBlockerKeys(item, opts.doneStatuses).filter((k) => k !== item.key && inRun.has(k));
    const human = blockers.find((k) => inRun.get(k)?.skipReason === 'executor: human') ?? null;
    cards.push({ key: item.key, title: item.title, item, skipReason: null, after: blockers.filter((k) => k !== human), gatedBy: human });
  }
  const settled = run.cards.length - cards.length - missing.length;
  return {
    command,
    originalCommand: original,
    cards,
    scopeKey,
    mode: modeOf(original),
    // The close-out of a scoped run (run_scope, or next over a container) follows its legs.
    closeOut: scopeKey !== null && (original === 'run_scope' || original === 'next'),
    capped: false,
    empty: cards.length === 0,
    note: `${cards.length} of ${counted(run.cards.length, 'card')} left to run${settled > 0 ? `, ${settled} settled or skipped` : ''}${missing.length ? `, ${missing.join(', ')} not readable` : ''}`,
  };
}

/**
 * Executes a run that is already open on the service instead of opening one (no openDispatchRun): a hosted
 * run, read with its own credential. Its command's semantics apply (the close-out of a scoped run,
 * batch's `drained`), the state folder and journal work as for a local run (an earlier attempt's
 * undelivered events are sent first), and the run is closed with an explicit status. `items` are
 * the work items of the legs still to run; a leg whose item is missing there is read with getWorkItem.
 */
export async function runExistingRun(
  opts: DispatchOptions,
  deps: DispatchDeps,
  input: { run: DispatchRun; items: Iterable<WorkItemDetail> },
): Promise<RunSummary> {
  const items = new Map([...input.items].map((i) => [i.key, i]));
  let run = input.run;
  const emptySummary = (note: string, exitCode: number): RunSummary => ({
    runId: run.id,
    command: (run.command as DispatchCommand) ?? 'run',
    scopeKey: run.scopeLabel,
    stopReason: run.stopReason,
    status: run.status,
    cards: [],
    legs: [],
    exitCode,
    note,
    dryRun: opts.dryRun,
  });
  if (run.status !== 'running') {
    deps.output.info(`run ${run.id} is already ${run.status}${run.stopReason ? ` (${run.stopReason})` : ''}: nothing to run`);
    return emptySummary('existing run, already closed', runExitCode({ status: run.status }));
  }
  checkMaxCost(opts);
  if (!opts.dryRun) run = await deliverEarlierAttempt(deps, run);
  for (const card of run.cards) {
    if (isOpenLeg(card.disposition) && !items.has(card.workItemKey)) items.set(card.workItemKey, await deps.service.getWorkItem(card.workItemKey));
  }
  const local = readRunRecord(deps.stateDir, run.id);
  const selection = selectionOfRun(run, items, {
    ...(local ? { originalCommand: local.originalCommand } : {}),
    ...(opts.doneStatuses ? { doneStatuses: opts.doneStatuses } : {}),
  });
  if (opts.dryRun) return noRun(selection, selection.note, true);
  return executeRun(opts, deps, {
    run,
    selection,
    resumed: true,
    idempotencyKey: null,
    origin: run.origin === 'hosted' ? 'hosted' : 'local',
  });
}
