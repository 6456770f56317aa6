// `runDispatch`: the one entry point of every dispatch command. It selects the card set, answers a
// dry run without opening anything, runs one run (or, for `auto`, one run per round until nothing
// is ready or the cap is reached) and returns a RunSummary whose exitCode follows DISPATCH §2.
import { randomUUID } from 'node:crypto';
import { KEY_PATTERN, type DispatchCommand, type DispatchRun, type StopReason, type WorkItemDetail } from '../contract/types.js';
import { cardSummaries, deliverEarlierAttempt, executeRun, runOnce } from './lifecycle/run-once.js';
import { openBlockerKeys } from './select/checks.js';
import { modeOf } from './select/index.js';
import type { DispatchDeps, DispatchOptions, RunSummary } from './lifecycle/types.js';
import { selectBatch } from './select/lanes.js';
import { recentFailures } from './select/recent.js';
import { priorWorkCheck } from './select/prior-work.js';
import { selectCards } from './select/index.js';
import type { SelectDeps, SelectedCard, Selection, SelectRequest } from './select/types.js';
import { readRunRecord } from './state.js';
import { AGENT_FORMATS, reportsSpend } from './agent/spend.js';
import { SelectionError } from './select/types.js';

export type { CardSummary, DispatchDeps, DispatchOptions, DispatchTimeouts, RunSummary } from './lifecycle/types.js';

const DAY_MS = 24 * 60 * 60_000;

function selectDeps(deps: DispatchDeps, opts?: DispatchOptions): SelectDeps {
  const lane = opts && !opts.rerun && (opts.command === 'next' || opts.command === 'batch' || opts.command === 'auto');
  return {
    service: deps.service,
    ...(lane
      ? { priorWork: priorWorkCheck({ stateDir: deps.stateDir, projectKey: opts.projectKey, repo: opts.repo, ...(opts.baseRef ? { baseRef: opts.baseRef } : {}) }) }
      : {}),
    localRun: (runId) => {
      const r = readRunRecord(deps.stateDir, runId);
      return r ? { originalCommand: r.originalCommand, scopeKey: r.scopeKey } : null;
    },
  };
}

function request(opts: DispatchOptions, extra: Partial<SelectRequest> = {}): SelectRequest {
  return {
    command: opts.command,
    projectKey: opts.projectKey,
    keys: opts.keys,
    ...(opts.lanes ? { lanes: opts.lanes } : {}),
    ...(opts.maxCards != null ? { max: opts.maxCards } : {}),
    ...(opts.doneStatuses ? { doneStatuses: opts.doneStatuses } : {}),
    ...extra,
  };
}

/** The stop reason of a run nothing stopped early, by the command whose semantics it follows. */
function plainStop(selection: Selection): StopReason {
  const c = selection.originalCommand;
  if (c === 'batch' || c === 'auto') return selection.capped ? 'max' : 'drained';
  return 'completed';
}

function noRun(selection: Selection, note: string, dryRun: boolean): RunSummary {
  return {
    runId: null, command: selection.command, scopeKey: selection.scopeKey, stopReason: null, status: null, cards: cardSummaries(selection),
    legs: [], exitCode: 0, note, dryRun,
  };
}

/** `--max-cost` over an agent that reports no spend would never stop the run: refused (exit 2). */
export function checkMaxCost(opts: Pick<DispatchOptions, 'agent' | 'maxCostUsd'>): void {
  if (opts.maxCostUsd == null || reportsSpend(opts.agent)) return;
  const who = opts.agent.agentCmd !== undefined ? (opts.agent.stream ? `--agent-cmd with --agent-format ${Object.entries(AGENT_FORMATS).find(([, f]) => f === opts.agent.stream)?.[0] ?? opts.agent.stream}` : '--agent-cmd without --agent-format') : `--agent ${opts.agent.agent ?? '(none)'}`;
  throw new SelectionError(`--max-cost needs an agent that reports its spend in dollars (claude, opencode, or --agent-cmd with --agent-format claude|opencode); ${who} reports none`);
}

export async function runDispatch(opts: DispatchOptions, deps: DispatchDeps): Promise<RunSummary> {
  checkMaxCost(opts);
  if (opts.command === 'auto') return runAuto(opts, deps);
  const sdeps = selectDeps(deps, opts);
  const selection = await selectCards(request(opts), sdeps);
  if (opts.dryRun) return noRun(selection, selection.note, true);
  // Lane commands with nothing ready open nothing; named commands still record their skips.
  if (selection.empty && (selection.command === 'next' || selection.command === 'batch')) {
    deps.output.info(selection.note);
    return noRun(selection, selection.note, false);
  }
  return runOnce(opts, deps, {
    selection,
    reselect: (exclude) => selectCards(request(opts, { exclude }), sdeps),
    naturalStop: async (s) => plainStop(s),
  });
}

/**
 * `auto`: rounds of batch-like runs. A card that failed in this invocation is never picked again,
 * nor one that failed in a recent local run (unless retryFailed). Each run closes `completed` when
 * more is ready and the loop goes on, `drained` when nothing is left, `max` when the cap is hit.
 * A card a 409 on open said another running run holds (another machine sharing the queue) is left
 * alone for the rest of the invocation: it stays ready once that run closes (a run moves no
 * status), so neither a later round nor the "is more ready?" check may count it again.
 */
async function runAuto(opts: DispatchOptions, deps: DispatchDeps): Promise<RunSummary> {
  const sdeps = selectDeps(deps, opts);
  const avoid = opts.retryFailed
    ? new Set<string>()
    : recentFailures(deps.stateDir, opts.projectKey, deps.clock.now() - (opts.recentFailureWindowMs ?? DAY_MS));
  if (avoid.size > 0) deps.output.info(`skipping cards that failed recently: ${[...avoid].join(', ')} (--retry-failed to include)`);
  // Cards another machine's run held when we tried to open them: theirs for this invocation.
  const elsewhere = new Set<string>();
  let left = opts.maxCards ?? Number.POSITIVE_INFINITY;
  const runs: RunSummary[] = [];
  const baseKey = opts.idempotencyKey ?? randomUUID();
  for (let round = 1; left > 0 && !deps.signal.aborted; round++) {
    const pick = (exclude: ReadonlySet<string>) =>
      selectBatch(request(opts, { command: 'auto', max: left, exclude: new Set([...avoid, ...elsewhere, ...exclude]) }), sdeps);
    const selection = await pick(new Set());
    if (opts.dryRun) return noRun(selection, selection.note, true);
    if (selection.empty) {
      if (runs.length === 0) deps.output.info(selection.note);
      break;
    }
    const summary = await runOnce(opts, deps, {
      selection,
      reselect: pick,
      idempotencyKey: round === 1 ? baseKey : `${baseKey}-${round}`,
      onTakenElsewhere: (keys) => {
        for (const k of keys) elsewhere.add(k);
      },
      naturalStop: async (s) => {
        const remaining = left - s.cards.filter((c) => !c.skipReason).length;
        // Is more ready beyond what this invocation took, or left to another machine? (Their cards
        // stay ready: no status moves.)
        const taken = new Set([...avoid, ...elsewhere, ...s.cards.map((c) => c.key)]);
        const more = await selectBatch(request(opts, { command: 'auto', max: 1, exclude: taken }), sdeps);
        if (more.empty) return 'drained';
        return remaining <= 0 ? 'max' : 'completed';
      },
    });
    runs.push(summary);
    left -= summary.cards.filter((c) => !c.skipReason).length;
    // Failed cards are never picked again in this invocation; implemented ones stay ready (a run
    // moves no status), so they are not picked again either.
    for (const card of summary.cards) avoid.add(card.key);
    if (summary.stopReason !== 'completed' && summary.stopReason !== 'replanned') break;
  }
  const last = runs[runs.length - 1];
  if (!last) {
    return { runId: null, command: 'auto', scopeKey: null, stopReason: null, status: null, cards: [], legs: [], exitCode: 0, note: 'nothing is ready', dryRun: false };
  }
  return {
    ...last,
    legs: runs.flatMap((r) => r.legs),
    cards: runs.flatMap((r) => r.cards),
    exitCode: runs.map((r) => r.exitCode).find((c) => c !== 0) ?? 0,
    note: `${runs.length} run(s)`,
    runs,
  };
}

/** A leg still to run in an existing run: queued, or running (an earlier attempt crashed in it). */
const isOpenLeg = (disposition: string): boolean => disposition === 'queued' || disposition === 'running';

const COMMANDS: readonly DispatchCommand[] = ['next', 'run', 'run_scope', 'batch', 'auto', 'fix', 'continue', 'review'];

/**
 * The card set of a run that is already open (a hosted run): its legs still `queued` or `running`,
 * in the run's order, with their work items (`items`, read with the run's credential). Nothing is
 * selected: the run decided. Blockers inside the run order the legs as run_scope would, and a
 * blocker the run skipped as `executor: human` gates the legs behind it.
 */
export function selectionOfRun(run: DispatchRun, items: ReadonlyMap<string, WorkItemDetail>, opts: { originalCommand?: DispatchCommand; doneStatuses?: readonly string[] } = {}): Selection {
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
    note: `${cards.length} of ${run.cards.length} card(s) left to run${settled > 0 ? `, ${settled} settled or skipped` : ''}${missing.length ? `, ${missing.join(', ')} not readable` : ''}`,
  };
}

/**
 * Executes a run that is already open on the service instead of opening one (no op 25): a hosted
 * run, read with its own credential. Its command's semantics apply (the close-out of a scoped run,
 * batch's `drained`), the state folder and journal work as for a local run (an earlier attempt's
 * undelivered events are sent first), and the run is closed with an explicit status. `items` are
 * the work items of the legs still to run; a leg whose item is missing there is read with op 8.
 */
export async function runExistingRun(
  opts: DispatchOptions,
  deps: DispatchDeps,
  input: { run: DispatchRun; items: Iterable<WorkItemDetail> },
): Promise<RunSummary> {
  const items = new Map([...input.items].map((i) => [i.key, i]));
  let run = input.run;
  const emptySummary = (note: string, exitCode: number): RunSummary => ({
    runId: run.id, command: (run.command as DispatchCommand) ?? 'run', scopeKey: run.scopeLabel, stopReason: run.stopReason, status: run.status,
    cards: [], legs: [], exitCode, note, dryRun: opts.dryRun,
  });
  if (run.status !== 'running') {
    deps.output.info(`run ${run.id} is already ${run.status}${run.stopReason ? ` (${run.stopReason})` : ''}: nothing to run`);
    return emptySummary('existing run, already closed', run.status === 'failed' ? 1 : 0);
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
    naturalStop: async (s) => plainStop(s),
  });
}
