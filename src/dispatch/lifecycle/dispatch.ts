// `runDispatch`: the one entry point of every dispatch command. It selects the card set, answers a
// dry run without opening anything, runs one run (or, for `auto`, one run per round until nothing
// is ready or the cap is reached) and returns a RunSummary whose exitCode follows README.md#exit-codes.
import { EXIT } from '../../api/errors.js';
import type { WorkItemDetail } from '../../contract/types.js';
import { randomUUID } from 'node:crypto';
import { AGENT_FORMATS, reportsSpend } from '../agent/spend.js';
import { selectCards } from '../select/index.js';
import { selectBatch } from '../select/lanes.js';
import { priorWorkCheck } from '../select/prior-work.js';
import { recentFailures } from '../select/recent.js';
import { SelectionError, type SelectDeps, type Selection, type SelectRequest } from '../select/types.js';
import { serviceErrorOf } from '../ports.js';
import { readRunRecord } from '../state/folder.js';
import { restoreCheckout } from '../git/worktree.js';
import { runOnce } from './run-once.js';
import { cardSummaries, nothingRanNote } from './summary.js';
import type { DispatchDeps, DispatchOptions, RunSummary } from './types.js';

const DAY_MS = 24 * 60 * 60_000;

/** The selection's deps for one invocation; `close` when it is done (a read of origin asked ahead stops). */
function selectDeps(deps: DispatchDeps, opts?: DispatchOptions): SelectDeps & { close(): void } {
  const lane = opts && !opts.rerun && (opts.command === 'next' || opts.command === 'batch' || opts.command === 'auto');
  const prior = lane
    ? priorWorkCheck({
        stateDir: deps.stateDir,
        projectKey: opts.projectKey,
        repo: opts.repo,
        ...(opts.baseRef ? { baseRef: opts.baseRef } : {}),
        warn: (line) => deps.output.warn(line),
      })
    : null;
  // The first page of a selection's listing, which a reselection after a 409 answers from.
  const listed = new Map<string, ReturnType<DispatchDeps['service']['listWorkItems']>>();
  const listWorkItems: DispatchDeps['service']['listWorkItems'] = (projectKey, query) => {
    if (query.cursor) return deps.service.listWorkItems(projectKey, query);
    const key = JSON.stringify([projectKey, query]);
    const page = listed.get(key) ?? deps.service.listWorkItems(projectKey, query);
    listed.set(key, page);
    page.catch(() => listed.delete(key));
    return page;
  };
  const starts = () => {
    listed.clear();
    prior?.fresh();
  };
  return {
    service: { ...deps.service, listWorkItems },
    selectionStarts: starts,
    ...(prior ? { priorWork: (item: WorkItemDetail) => prior.check(item) } : {}),
    ...(prior && !opts?.dryRun ? { pushedElsewhere: (keys: readonly string[]) => prior.pushedElsewhere(keys) } : {}),
    localRun: (runId) => {
      const r = readRunRecord(deps.stateDir, runId);
      return r ? { originalCommand: r.originalCommand, scopeKey: r.scopeKey } : null;
    },
    close: () => prior?.close(),
  };
}

/**
 * The deps of a reselection after a 409 on open: it answers the same moment's question without the
 * cards another run holds, so the ready list and origin's branches as the selection read them a
 * moment ago still stand (in a fleet the 409s are about one per card); each card it reaches for is
 * read again, and the card's own branch is asked after the open.
 */
function sameReadOfOrigin(deps: SelectDeps): SelectDeps {
  const { selectionStarts: _fresh, ...same } = deps;
  return same;
}

function request(opts: DispatchOptions, extra: Partial<SelectRequest> = {}): SelectRequest {
  return {
    command: opts.command,
    projectKey: opts.projectKey,
    keys: opts.keys,
    ...(opts.lanes ? { lanes: opts.lanes } : {}),
    ...(opts.maxCards != null ? { max: opts.maxCards } : {}),
    ...(opts.doneStatuses ? { doneStatuses: opts.doneStatuses } : {}),
    ...(opts.rerun ? { rerun: true } : {}),
    ...extra,
  };
}

export function noRun(selection: Selection, note: string, dryRun: boolean, exitCode: number = EXIT.ok): RunSummary {
  return {
    runId: null,
    command: selection.command,
    scopeKey: selection.scopeKey,
    stopReason: null,
    status: null,
    cards: cardSummaries(selection),
    legs: [],
    exitCode,
    note,
    dryRun,
  };
}

/**
 * A selection with nothing to run opens no run. Lane commands say so and succeed (`drained`);
 * `continue` of a run whose legs all landed has nothing left (exit 0); a command given keys, or a
 * `continue` whose cards are left but cannot run, exits 1 with the reasons.
 */
function nothingToRun(selection: Selection): RunSummary {
  if (selection.command === 'next' || selection.command === 'batch' || selection.command === 'auto') return noRun(selection, selection.note, false);
  if (selection.command === 'continue' && selection.cards.length === 0) return noRun(selection, `${selection.note}: nothing left to run, no run opened`, false);
  return noRun(selection, nothingRanNote(selection), false, EXIT.failed);
}

/**
 * `--max-cost` over an agent that reports no spend would never stop the run: refused (exit 2).
 * Checked once per run: by the command before it contacts anything, by runExistingRun on a hosted run.
 */
export function checkMaxCost(opts: Pick<DispatchOptions, 'agent' | 'maxCostUsd'>): void {
  if (opts.maxCostUsd == null || reportsSpend(opts.agent)) return;
  const who =
    opts.agent.agentCmd !== undefined
      ? opts.agent.stream
        ? `--agent-cmd with --agent-format ${Object.entries(AGENT_FORMATS).find(([, f]) => f === opts.agent.stream)?.[0] ?? opts.agent.stream}`
        : '--agent-cmd without --agent-format'
      : `--agent ${opts.agent.agent ?? '(none)'}`;
  throw new SelectionError(
    `--max-cost needs an agent that reports its spend in dollars (claude, opencode, or --agent-cmd with --agent-format claude|opencode); ${who} reports none`,
  );
}

export async function runDispatch(opts: DispatchOptions, deps: DispatchDeps): Promise<RunSummary> {
  const base = opts.base;
  if (opts.worktree || !base || opts.dryRun) return dispatchOnce(opts, deps);
  // In place, the checkout goes back to the base however the run ended, so no later run reads
  // rules or files from a branch an agent wrote (docs/workflow.md, "The base commit").
  try {
    return await dispatchOnce(opts, deps);
  } finally {
    const stuck = await restoreCheckout(opts.repo, base).catch((e: Error) => e.message.split('\n')[0] ?? String(e));
    if (stuck) deps.output.warn(stuck);
  }
}

async function dispatchOnce(opts: DispatchOptions, deps: DispatchDeps): Promise<RunSummary> {
  const sdeps = selectDeps(deps, opts);
  try {
    return await (opts.command === 'auto' ? runAuto(opts, deps, sdeps) : runSelected(opts, deps, sdeps));
  } finally {
    sdeps.close();
  }
}

async function runSelected(opts: DispatchOptions, deps: DispatchDeps, sdeps: SelectDeps): Promise<RunSummary> {
  const selection = await selectCards(request(opts), sdeps);
  if (opts.dryRun) return noRun(selection, selection.note, true);
  // Nothing to run opens no run (the summary says why; the command prints it once).
  if (selection.empty) return nothingToRun(selection);
  return runOnce(opts, deps, {
    selection,
    reselect: (exclude) => selectCards(request(opts, { exclude }), sameReadOfOrigin(sdeps)),
  });
}

/** The selection the last "is more ready?" check made, when it answers the round about to start. */
function takeAhead(ahead: { selection: Selection; exclude: ReadonlySet<string> } | null, exclude: ReadonlySet<string>, sameMax: boolean): Selection | null {
  if (!ahead || !sameMax || ahead.selection.empty || ahead.exclude.size !== exclude.size) return null;
  for (const key of exclude) if (!ahead.exclude.has(key)) return null;
  return ahead.selection;
}

/**
 * `auto`: rounds of batch-like runs. A card that failed in this invocation is never picked again,
 * nor one that failed in a recent local run (unless retryFailed). Each run closes `completed` when
 * more is ready and the loop goes on, `drained` when nothing is left, `max` when the cap is hit.
 * A card a 409 on open said another running run holds (another machine sharing the queue) is left
 * alone for the rest of the invocation: an implemented card is recorded `in_review` by that run,
 * but a failed one, or one a service did not record, stays ready once that run closes, so neither
 * a later round nor the "is more ready?" check may count it again.
 */
async function runAuto(opts: DispatchOptions, deps: DispatchDeps, sdeps: SelectDeps): Promise<RunSummary> {
  const avoid = opts.retryFailed
    ? new Set<string>()
    : recentFailures(deps.stateDir, opts.projectKey, deps.clock.now() - (opts.recentFailureWindowMs ?? DAY_MS));
  if (avoid.size > 0) deps.output.info(`skipping cards that failed recently: ${[...avoid].join(', ')} (--retry-failed to include)`);
  // Cards another machine's run held when we tried to open them: theirs for this invocation.
  const elsewhere = new Set<string>();
  let left = opts.maxCards ?? Number.POSITIVE_INFINITY;
  const runs: RunSummary[] = [];
  let idle = 'nothing is ready';
  const baseKey = opts.idempotencyKey ?? randomUUID();
  // With --per-run, the "is more ready?" check before a run closes is the next round's selection,
  // made a moment early: a fleet's worker then lists the backlog and reads origin once per card,
  // not twice. Taken only when the next round would ask exactly the same question.
  let ahead: { selection: Selection; exclude: ReadonlySet<string> } | null = null;
  const roundMax = () => Math.min(left, opts.perRun ?? left);
  const batchOf = (exclude: ReadonlySet<string>, max: number, deps = sdeps) =>
    selectBatch(request(opts, { command: 'auto', max, exclude, ...(opts.perRun ? { spread: true } : {}) }), deps);
  for (let round = 1; left > 0 && !deps.signal.aborted; round++) {
    // A round that takes what is left of --max stops `max` (unless nothing more is ready).
    const capped = (s: Selection): Selection => ({ ...s, capped: s.cards.filter((c) => !c.skipReason).length >= left });
    const pick = async (exclude: ReadonlySet<string>, deps = sdeps): Promise<Selection> =>
      capped(await batchOf(new Set([...avoid, ...elsewhere, ...exclude]), roundMax(), deps));
    const early = takeAhead(ahead, new Set([...avoid, ...elsewhere]), opts.perRun === roundMax());
    ahead = null;
    const selection = early ? capped(early) : await pick(new Set());
    if (opts.dryRun) return noRun(selection, selection.note, true);
    if (selection.empty) {
      // Said once, by the summary (the CLI prints its note).
      if (runs.length === 0) idle = selection.note;
      break;
    }
    const heldBefore = elsewhere.size;
    const attempt = runOnce(opts, deps, {
      selection,
      reselect: (exclude) => pick(exclude, sameReadOfOrigin(sdeps)),
      idempotencyKey: round === 1 ? baseKey : `${baseKey}-${round}`,
      onTakenElsewhere: (keys) => {
        for (const k of keys) elsewhere.add(k);
      },
      moreReady: async (s) => {
        // Is more ready beyond what this invocation took, or left to another machine? (Their cards
        // may stay ready: see above.)
        const taken = new Set([...avoid, ...elsewhere, ...s.cards.map((c) => c.key)]);
        const more = await batchOf(taken, opts.perRun ?? 1);
        if (opts.perRun) ahead = { selection: more, exclude: taken };
        return !more.empty;
      },
    });
    const summary = await attempt.catch((error: unknown) => {
      // The open's reselections ended on a 409 that named none of our cards, after others that
      // did: those keys are in `elsewhere` now, so the next round starts past them; a 409 that
      // taught nothing new is an error.
      if (serviceErrorOf(error).status === 409 && elsewhere.size > heldBefore) return null;
      throw error;
    });
    if (!summary) continue;
    runs.push(summary);
    left -= summary.legs.length;
    // Failed cards are never picked again in this invocation, nor implemented ones (a service that
    // took no record keeps them ready). A card a stop left unreached (replanned) was not tried: the
    // next round may pick it.
    const ran = new Set(summary.legs.map((l) => l.key));
    for (const card of summary.cards) if (ran.has(card.key) || card.skipReason) avoid.add(card.key);
    if (summary.stopReason !== 'completed' && summary.stopReason !== 'replanned') break;
  }
  const last = runs[runs.length - 1];
  if (!last) {
    return { runId: null, command: 'auto', scopeKey: null, stopReason: null, status: null, cards: [], legs: [], exitCode: EXIT.ok, note: idle, dryRun: false };
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
