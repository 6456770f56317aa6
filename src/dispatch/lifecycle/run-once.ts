// One dispatch run from open to close: state folder, event stream, heartbeat, the legs in order
// (or N at once), and a close with an explicit status (DISPATCH §4 "Status sent at close").
import { randomUUID } from 'node:crypto';
import { exitCodeFor } from '../../api/errors.js';
import type { CloseStatus, DispatchRun, StopReason, WorkItemDetail } from '../../contract/types.js';
import { EventStream } from '../event-stream.js';
import { startHeartbeat } from '../heartbeat.js';
import { Journal } from '../journal.js';
import { RunClosedError, isRetryable, isRunClosed, serviceErrorOf, type LegSummary } from '../ports.js';
import { openBlockerKeys } from '../select/checks.js';
import type { Selection } from '../select/types.js';
import { interruptionExitCode } from '../signals.js';
import { closeRun } from '../close.js';
import {
  LocalStateError, createRunFolder, describeFsError, stateFolderFault, readRunRecord, removePendingOpen, runPaths, writePendingOpen,
  type PendingOpen, type RunPaths, type RunRecord,
} from '../state.js';
import { acquireRunLock, isRunLive, processStart, runLockOwner, RunLockedError, selfMark, type RunLock } from '../run-lock.js';
import { runCardLeg, runCloseOut, type LegContext } from './leg.js';
import { openBody, openWithReselect } from './open.js';
import type { CardSummary, DispatchDeps, DispatchOptions, RunSummary } from './types.js';

export interface RunOnceInput {
  selection: Selection;
  /** Reselects without the given keys (after a 409 on open). */
  reselect(exclude: ReadonlySet<string>): Promise<Selection>;
  /** The stop reason when nothing stopped the run early (auto asks whether more is ready). */
  naturalStop(selection: Selection): Promise<StopReason>;
  /** Hears the keys a 409 on open said another running run holds, as they are excluded. */
  onTakenElsewhere?(keys: readonly string[]): void;
  idempotencyKey?: string;
}

const SIGNAL_FLUSH_MS = 10_000;
const CLOSE_FLUSH_MS = 5 * 60_000;

export function cardSummaries(selection: Selection): CardSummary[] {
  return selection.cards.map((c) => ({ key: c.key, title: c.title, skipReason: c.skipReason, gatedBy: c.gatedBy }));
}

/** Why the item no longer matches the plan the run opened with, or null. */
export function replanReason(before: WorkItemDetail, now: WorkItemDetail, doneStatuses?: readonly string[]): string | null {
  if (now.archivedAt && !before.archivedAt) return `${now.key} was archived`;
  if (now.parentKey !== before.parentKey) return `${now.key} was re-parented (${before.parentKey ?? 'none'} → ${now.parentKey ?? 'none'})`;
  const had = new Set(openBlockerKeys(before, doneStatuses));
  const gained = openBlockerKeys(now, doneStatuses).filter((k) => !had.has(k));
  if (gained.length > 0) return `${now.key} gained an open blocker: ${gained.join(', ')}`;
  return null;
}

function summaryOf(selection: Selection, run: DispatchRun | null, exitCode: number, note: string, legs: LegSummary[] = []): RunSummary {
  return {
    runId: run?.id ?? null,
    command: selection.command,
    scopeKey: selection.scopeKey,
    stopReason: run?.stopReason ?? null,
    status: run?.status ?? null,
    cards: cardSummaries(selection),
    legs,
    exitCode,
    note,
    dryRun: false,
  };
}

export async function runOnce(opts: DispatchOptions, deps: DispatchDeps, input: RunOnceInput): Promise<RunSummary> {
  const { service, output } = deps;
  if (deps.signal.aborted) {
    // Interrupted before anything was opened: nothing to close.
    return summaryOf(input.selection, null, interruptionExitCode(deps.signal.reason) ?? 130, 'interrupted before the run opened');
  }
  const idempotencyKey = input.idempotencyKey ?? opts.idempotencyKey ?? randomUUID();
  const agentName = opts.agent.agent ?? 'custom';
  // The local record comes first: a pending record (no token) names the open's idempotency key,
  // so a run whose open lands while its run.json never does is still found by `svc runs recover`.
  // A state folder that cannot be written stops here, before anything is opened.
  // (An object: the path is set inside the body callback, which narrowing does not see.)
  const pending: { path: string | null } = { path: null };
  // Whether the last open sent may have created the run: a refusal (4xx) proves it did not (a
  // repeated key is answered with its run before any check could refuse it); a fault past
  // max-wait may have come after the open landed.
  let mayHaveLanded = false;
  const opener: Pick<typeof service, 'openDispatchRun'> = {
    openDispatchRun: async (body) => {
      mayHaveLanded = true;
      try {
        return await service.openDispatchRun(body);
      } catch (error) {
        if (!isRetryable(error) && !serviceErrorOf(error).ambiguous) mayHaveLanded = false;
        throw error;
      }
    },
  };
  let result: Awaited<ReturnType<typeof openWithReselect>>;
  try {
    result = await openWithReselect(
      opener,
      input.selection,
      (s) => {
        const body = openBody(s, opts.projectKey, idempotencyKey, agentName, opts.agent.model);
        // Rewritten on each reselection: recover repeats the open exactly as last sent.
        pending.path = writePendingOpen(deps.stateDir, {
          idempotencyKey, open: body, record: recordBase(opts, deps, s, idempotencyKey, 'local'), owner: selfMark(),
        });
        return body;
      },
      input.reselect,
      (m) => output.info(m),
      input.onTakenElsewhere,
    );
  } catch (error) {
    // No run was made: the record goes. One may have been: the record stays, and recover
    // re-opens with the key to find out.
    if (pending.path && !mayHaveLanded) removePendingOpen(pending.path);
    else if (pending.path) output.warn('the open of the run may have landed; `svc runs recover` closes the run if it did');
    throw error;
  }
  if (!result) {
    if (pending.path) removePendingOpen(pending.path);
    return summaryOf(input.selection, null, 0, 'every candidate is already in another running run');
  }
  const { selection } = result;
  const run = result.opened.run;
  const adopted = !result.opened.created;
  if (adopted && run.status !== 'running') {
    // A retried CI job found its finished run: report it, run nothing.
    if (pending.path) removePendingOpen(pending.path);
    output.info(`run ${run.id} already exists (idempotency key) and is ${run.status}`);
    return summaryOf(selection, run, run.status === 'failed' ? 1 : 0, 'existing run, already closed');
  }
  return executeRun(opts, deps, { run, selection, resumed: adopted, idempotencyKey, naturalStop: input.naturalStop, pendingPath: pending.path });
}

/** run.json's content apart from what the open answers (id, seq, run): no secrets. */
export function recordBase(
  opts: DispatchOptions,
  deps: Pick<DispatchDeps, 'clock'>,
  selection: Selection,
  idempotencyKey: string | null,
  origin: 'local' | 'hosted',
): PendingOpen['record'] {
  return {
    baseUrl: opts.baseUrl,
    projectKey: opts.projectKey,
    command: selection.command,
    originalCommand: selection.originalCommand,
    scopeKey: selection.scopeKey,
    openedAt: new Date(deps.clock.now()).toISOString(),
    cards: selection.cards.map((c) => (c.skipReason ? { workItemKey: c.key, skipReason: c.skipReason } : { workItemKey: c.key })),
    options: {
      repo: opts.repo, agent: opts.agent, onFailure: opts.onFailure, parallel: opts.parallel, sendLogs: opts.sendLogs,
      allowEmpty: opts.allowEmpty, timeouts: opts.timeouts, maxCostUsd: opts.maxCostUsd ?? null, worktree: opts.worktree,
      lanes: opts.lanes ?? null, idempotencyKey, push: opts.push ?? false, origin,
      pr: opts.pr ?? false, draft: opts.draft ?? false,
    },
  };
}

/** What `executeRun` runs: a run that is open on the service, and its card set. */
export interface ExecuteInput {
  run: DispatchRun;
  selection: Selection;
  /**
   * The run existed before this invocation (an adopted idempotency key, a hosted run): its legs
   * already `implemented` count as landed, and a state folder left by an earlier attempt is reused.
   */
  resumed: boolean;
  /** Recorded in run.json; null for a run this client did not open (hosted). */
  idempotencyKey: string | null;
  naturalStop(selection: Selection): Promise<StopReason>;
  /** Recorded in run.json's options (hosted runs say so, for `svc runs recover`). */
  origin?: 'local' | 'hosted';
  /** The pending record written before the open: removed once run.json holds the run. */
  pendingPath?: string | null;
}

/**
 * Reconciles a journal an earlier attempt left behind with the run's seq (op 26), as `svc runs
 * recover` does: what the service stored is acknowledged, the rest is sent by the stream.
 */
function reconcileJournal(journal: Journal, record: RunRecord, run: DispatchRun): void {
  const stored = Math.min(journal.lastN, Math.max(0, run.seq - record.baseSeq));
  if (stored > journal.ackedN) journal.ack(stored, run.seq);
}

/**
 * Before a hosted run is resumed: events an earlier attempt journalled but never delivered (a
 * crash, kill -9) are sent first, so the legs still to run are read from an up-to-date run.
 * Returns the run as the service has it afterwards (unchanged when nothing was pending).
 */
export async function deliverEarlierAttempt(deps: DispatchDeps, run: DispatchRun, timeoutMs = 60_000): Promise<DispatchRun> {
  const record = readRunRecord(deps.stateDir, run.id);
  if (!record) return run;
  if (isRunLive(deps.stateDir, run.id)) throw new RunLockedError(run.id, runLockOwner(deps.stateDir, run.id)!);
  const paths = runPaths(deps.stateDir, run.id);
  const journal = Journal.open(paths.journal);
  try {
    reconcileJournal(journal, record, run);
    const pending = journal.lastN - journal.ackedN;
    if (pending === 0) return run;
    deps.output.info(`run ${run.id}: sending ${pending} event(s) an earlier attempt left undelivered`);
    const stream = new EventStream({ service: deps.service, runId: run.id, journal, baseSeq: record.baseSeq, flushIntervalMs: 50, warn: (m) => deps.output.warn(m) });
    try {
      const flushed = await stream.flush(timeoutMs);
      if (!flushed) deps.output.warn(`run ${run.id}: ${stream.pending} earlier event(s) still not delivered; they are sent with this attempt's`);
    } finally {
      await stream.stop();
    }
    return await deps.service.getDispatchRun(run.id);
  } finally {
    journal.close();
  }
}

/**
 * The run is open on the service but its state folder or journal could not be written: nothing
 * may run unrecorded, so the run is closed at once (`interrupted`/`cancelled`) and the pending
 * record removed. When even the close fails, the pending record stays for `svc runs recover`.
 * Returns the error to throw (one line, exit 1).
 */
async function abandonUnrecorded(deps: DispatchDeps, run: DispatchRun, pendingPath: string | null, error: unknown): Promise<LocalStateError> {
  const why = `cannot record run ${run.id} under ${deps.stateDir}: ${describeFsError(error)}`;
  try {
    const closed = await closeRun(deps.service, run.id, { stopReason: 'interrupted', status: 'cancelled' }, { warn: (m) => deps.output.warn(m) });
    if (pendingPath) removePendingOpen(pendingPath);
    return new LocalStateError(`${why}; the run was closed ${closed.run?.stopReason ?? 'interrupted'} without running anything`, error);
  } catch (closeError) {
    const tail = pendingPath ? '`svc runs recover` closes it' : 'the service\'s reaper closes it';
    return new LocalStateError(`${why}; it could not be closed either (${serviceErrorOf(closeError).message ?? String(closeError)}): ${tail}`, error);
  }
}

/** Runs the legs of an open run and closes it with an explicit status. */
export async function executeRun(opts: DispatchOptions, deps: DispatchDeps, input: ExecuteInput): Promise<RunSummary> {
  const { service, output } = deps;
  const { selection, idempotencyKey } = input;
  let run = input.run;
  const adopted = input.resumed;

  // --- local state: run.json (no secrets) and the journal, before any event ---
  let record: RunRecord;
  let paths: RunPaths;
  let journal: Journal;
  // The run is live here until it is closed (or this process dies): recover and prune keep off.
  let lock: RunLock | undefined;
  try {
    const existing = readRunRecord(deps.stateDir, run.id);
    record = existing ?? { ...recordBase(opts, deps, selection, idempotencyKey, input.origin ?? 'local'), runId: run.id, baseSeq: run.seq, run };
    paths = existing ? runPaths(deps.stateDir, run.id) : createRunFolder(deps.stateDir, record);
    // Taken before the journal is touched: a run another live process holds (a second attempt
    // of a CI job while the first still runs) is left to it, its journal unread and unwritten.
    lock = acquireRunLock(deps.stateDir, run.id);
    journal = Journal.open(paths.journal);
    if (existing) reconcileJournal(journal, record, run);
  } catch (error) {
    if (error instanceof RunLockedError) {
      if (input.pendingPath) removePendingOpen(input.pendingPath);
      throw error;
    }
    lock?.release();
    // A run this invocation opened is closed rather than left running unrecorded; a run it was
    // handed (hosted) belongs to its platform, which sees the failure.
    if (input.pendingPath === undefined) throw error;
    throw await abandonUnrecorded(deps, run, input.pendingPath, error);
  }
  if (input.pendingPath) removePendingOpen(input.pendingPath);

  const controller = new AbortController();
  let closedByServer: RunClosedError | null = null;
  let failure: unknown = null;
  let timedOut = false;
  const onClosed = (e: RunClosedError) => {
    closedByServer ??= e;
    controller.abort(e);
    // Nothing more is sent once the service has closed the run (reads only).
    void stream.stop();
  };
  const stream = new EventStream({
    service, runId: run.id, journal, baseSeq: record.baseSeq,
    ...(opts.flushIntervalMs ? { flushIntervalMs: opts.flushIntervalMs } : {}),
    ...(opts.maxWaitMs !== undefined ? { giveUpAfterMs: opts.maxWaitMs } : {}),
    onClosed,
    onFailed: (e) => {
      const local = stateFolderFault(e, deps.stateDir);
      if (local && failure === null) output.warn(`${local.message}: stopping the run (free some space, then \`svc continue ${run.id}\`)`);
      failure ??= local ?? e;
      controller.abort(failure);
    },
    warn: (m) => output.warn(m),
  });
  // Hosted runs send no heartbeat: op 31 is not among the run credential's operations.
  const heartbeat =
    opts.heartbeat === false
      ? { stop: async () => undefined }
      : startHeartbeat({
          service, runId: run.id, intervalMs: opts.heartbeatIntervalMs, onClosed, warn: (m) => output.warn(m),
          // A service unreachable past --max-wait stops the run as an append past it does.
          ...(opts.maxWaitMs !== undefined ? { giveUpAfterMs: opts.maxWaitMs } : {}),
          onFailed: (e) => {
            failure ??= e;
            controller.abort(e);
          },
        });
  const onSignal = () => controller.abort(deps.signal.reason);
  if (deps.signal.aborted) onSignal();
  else deps.signal.addEventListener('abort', onSignal, { once: true });
  const runTimer = opts.timeouts.runMs
    ? setTimeout(() => {
        timedOut = true;
        controller.abort(new Error('run timeout'));
      }, opts.timeouts.runMs)
    : null;
  output.info(`run ${run.id} ${adopted ? 'resumed' : 'opened'} (${selection.command}${selection.scopeKey ? ` ${selection.scopeKey}` : ''}): ${selection.note}`);

  // --- legs ---
  let stop: StopReason | null = null;
  // Spend: finished legs' totals plus what running legs' streams reported so far, checked on
  // every report so parallel legs cannot each overshoot the cap.
  let cost = 0;
  const spending = new Map<string, number>();
  const checkCost = (): void => {
    if (opts.maxCostUsd == null) return;
    const total = cost + [...spending.values()].reduce((a, b) => a + b, 0);
    if (total < opts.maxCostUsd) return;
    if (stop === null) output.info(`reported spend $${total.toFixed(2)} reached --max-cost: no new legs, stopping max`);
    stop ??= 'max';
  };
  const ctx: LegContext = {
    runId: run.id, command: selection.command, mode: selection.mode, opts, deps, stream, paths, signal: controller.signal,
    onSpend: (key, usd) => {
      spending.set(key, usd);
      checkCost();
    },
    onAgentGroup: (_key, event, pgid) => (event === 'start' ? journal.agentStarted(_key, pgid, processStart(pgid)) : journal.agentEnded(pgid)),
  };
  const landed = new Set(adopted ? run.cards.filter((c) => c.disposition === 'implemented').map((c) => c.workItemKey) : []);
  const failed = new Set<string>();
  const legs: LegSummary[] = [];
  const running = new Map<string, Promise<void>>();
  const todo = selection.cards.filter((c) => !c.skipReason && !landed.has(c.key));
  let closeOut: RunSummary['closeOut'] = null;
  const halted = () => stop !== null || controller.signal.aborted;
  try {
    let index = 0;
    for (const card of todo) {
      if (halted()) break;
      if (card.gatedBy) {
        output.info(`${card.key} waits on ${card.gatedBy} (executor: human): stopping gated`);
        stop = 'gated';
        break;
      }
      while (card.after.some((k) => running.has(k)) || running.size >= Math.max(1, opts.parallel)) {
        await Promise.race(running.values());
      }
      if (halted()) break;
      const unmet = card.after.find((k) => !landed.has(k));
      if (unmet) {
        output.warn(`${card.key} not started: its blocker ${unmet} did not land`);
        continue;
      }
      // An item that can no longer be read (deleted, moved out of the project) is a changed plan too.
      const fresh = await service.getWorkItem(card.key).catch((error: unknown) => {
        if (serviceErrorOf(error).status === 404) return null;
        throw error;
      });
      const why = fresh ? replanReason(card.item, fresh, opts.doneStatuses) : `${card.key} can no longer be read`;
      if (why || !fresh) {
        output.info(`${why}: stopping replanned`);
        stop = 'replanned';
        break;
      }
      index++;
      const legStarted = deps.clock.now();
      // runCardLeg settles every agent failure itself; what still rejects is local (a full disk
      // refusing even the failed disposition): the card is shown failed with that cause.
      const outcome = runCardLeg(ctx, fresh, index, todo.length).catch((error: unknown) => ({
        implemented: false,
        summary: {
          key: card.key, title: fresh.title, disposition: 'failed', durationMs: deps.clock.now() - legStarted, exitCode: null,
          reason: stateFolderFault(error, deps.stateDir)?.message ?? describeFsError(error), costUsd: null, tokens: { in: null, out: null }, sessionBranch: null,
        },
      }));
      const leg = outcome.then((o) => {
        legs.push(o.summary);
        spending.delete(card.key);
        cost += o.summary.costUsd ?? 0;
        if (o.implemented) landed.add(card.key);
        else {
          failed.add(card.key);
          if (opts.onFailure === 'halt' && !controller.signal.aborted) stop ??= 'halted';
        }
        checkCost();
      });
      running.set(card.key, leg.finally(() => running.delete(card.key)));
    }
    await Promise.all(running.values());
    if (selection.closeOut && selection.scopeKey && !halted() && landed.size > 0) {
      try {
        const r = await runCloseOut(ctx, await service.getWorkItem(selection.scopeKey));
        closeOut = { outcome: r.outcome, exitCode: r.exitCode, reason: r.reason };
        if (r.outcome === 'failed') output.warn(`close-out of ${selection.scopeKey} failed: ${r.reason ?? 'failed'}`);
      } catch (error) {
        if (error instanceof RunClosedError || isRunClosed(error)) throw error;
        output.warn(`close-out of ${selection.scopeKey} could not run: ${serviceErrorOf(error).message ?? String(error)}`);
        closeOut = { outcome: 'failed', exitCode: null, reason: serviceErrorOf(error).message ?? 'error' };
      }
    }
  } catch (error) {
    // A read that failed past the client's retries: stop starting legs, let running ones end.
    controller.abort(error);
    await Promise.allSettled(running.values());
    if (!closedByServer) failure ??= error;
  } finally {
    if (runTimer) clearTimeout(runTimer);
    deps.signal.removeEventListener('abort', onSignal);
  }
  legs.sort((a, b) => todo.findIndex((c) => c.key === a.key) - todo.findIndex((c) => c.key === b.key));

  // --- close, with an explicit status ---
  const interrupted = deps.signal.aborted && !timedOut && !closedByServer;
  let stopReason: StopReason;
  let status: CloseStatus;
  let exitCode = 0;
  if (timedOut) [stopReason, status, exitCode] = ['interrupted', 'timed_out', 1];
  else if (interrupted) [stopReason, status, exitCode] = ['interrupted', 'cancelled', interruptionExitCode(deps.signal.reason) ?? 130];
  else if (failure) [stopReason, status, exitCode] = ['halted', 'failed', exitCodeFor(failure)];
  // (Cast: `stop` is also set inside the legs' callbacks, which narrowing does not see.)
  else if (stop) [stopReason, status] = [stop, (stop as StopReason) === 'halted' || failed.size > 0 ? 'failed' : 'succeeded'];
  else [stopReason, status] = [await input.naturalStop(selection), failed.size > 0 ? 'failed' : 'succeeded'];
  if (status === 'failed' && exitCode === 0) exitCode = 1;

  let final: DispatchRun | null = null;
  let note = selection.note;
  // Read through a function: the callbacks of the stream and the heartbeat set it meanwhile.
  const closedRemotely = (): boolean => closedByServer !== null;
  try {
    // The decided close is journalled before anything can fail: a run left open (service gone,
    // disk full) is closed by `svc runs recover` as decided here, not `interrupted`.
    // A journal that cannot take it (a full disk) does not keep the close from the service.
    if (!closedRemotely()) {
      try {
        journal.markClosing(stopReason, status);
      } catch (error) {
        const local = stateFolderFault(error, deps.stateDir);
        output.warn(`cannot journal the close of run ${run.id}: ${local?.message ?? describeFsError(error)}`);
      }
    }
    if (!closedRemotely()) {
      const flushed = await stream.flush(interrupted || timedOut ? opts.timeouts.flushMs ?? SIGNAL_FLUSH_MS : CLOSE_FLUSH_MS);
      // Events the service refused outright (a 4xx) can never be delivered: close anyway.
      const undeliverable = stream.failure !== null && !isRetryable(stream.failure);
      if (!flushed && !closedRemotely() && !undeliverable) {
        // Closing now would drop dispositions for good: leave the run to `svc runs recover`.
        output.warn(`${stream.pending} event(s) not delivered; run ${run.id} left open for \`svc runs recover\``);
        return { ...summaryOf(selection, run, exitCode || exitCodeFor(stream.failure ?? failure), note, legs), stopReason, status: 'running', closeOut };
      }
    }
    // The close is the run's last word: a beat racing it would come back 409 and read as a remote close.
    await heartbeat.stop();
    if (!closedRemotely()) {
      // An ambiguous failure is settled by reading the run, and the close repeated while it is
      // still running: exit by the run's outcome, not 5, when the close landed after all.
      const closed = await closeRun(service, run.id, { stopReason, status }, {
        warn: (m) => output.warn(m), ...(opts.maxWaitMs !== undefined ? { giveUpAfterMs: opts.maxWaitMs } : {}),
      });
      if (closed.kind === 'closed') final = closed.run;
      else {
        closedByServer = new RunClosedError(run.id);
        final = closed.run;
      }
    }
    if (closedRemotely()) {
      // The run ended on the service's side (reaper, another client): reads only from here.
      output.warn(`run ${run.id} was closed by the service; stopped locally`);
      note = 'closed by the service';
      exitCode = 1;
      final ??= await service.getDispatchRun(run.id).catch(() => null);
    }
    try {
      journal.markClosed(final?.stopReason ?? null, final?.status ?? null);
    } catch {
      // The service holds the close; recover finds it already closed and only notes it.
    }
  } catch (error) {
    output.warn(`could not close run ${run.id}: ${serviceErrorOf(error).message ?? String(error)}; \`svc runs recover\` will`);
    exitCode = exitCode || exitCodeFor(error);
  } finally {
    await heartbeat.stop();
    await stream.stop();
    journal.close();
    lock?.release();
  }
  run = final ?? run;
  return {
    ...summaryOf(selection, run, exitCode, note, legs),
    stopReason: final?.stopReason ?? stopReason,
    status: final?.status ?? status,
    closeOut,
  };
}
