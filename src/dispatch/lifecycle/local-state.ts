// A run's local state: run.json (no secrets), the lock that says the run is live here, and the
// journal every event goes through first (docs/dispatch.md#the-wire). Written before anything runs: a run that
// cannot be recorded runs nothing.
import { EventStream } from '../wire/event-stream.js';
import { Journal } from '../wire/journal.js';
import { serviceErrorOf } from '../ports.js';
import { closeRun } from '../wire/close.js';
import type { DispatchRun } from '../../contract/types.js';
import type { Selection } from '../select/types.js';
import {
  LocalStateError,
  createRunFolder,
  describeFsError,
  readRunRecord,
  removePendingOpen,
  runPaths,
  type PendingOpen,
  type RunPaths,
  type RunRecord,
} from '../state/folder.js';
import { acquireRunLock, isRunLive, runLockOwner, RunLockedError, type RunLock } from '../state/run-lock.js';
import { recordedOptions } from '../options.js';
import type { DispatchDeps, DispatchOptions } from './types.js';

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
    options: recordedOptions(opts, idempotencyKey, origin),
  };
}

/**
 * Reconciles a journal an earlier attempt left behind with the run's seq (getDispatchRun), as `svc runs
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
    const stream = new EventStream({
      service: deps.service,
      runId: run.id,
      journal,
      baseSeq: record.baseSeq,
      flushIntervalMs: 50,
      warn: (m) => deps.output.warn(m),
    });
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
    const tail = pendingPath ? '`svc runs recover` closes it' : "the service's reaper closes it";
    return new LocalStateError(`${why}; it could not be closed either (${serviceErrorOf(closeError).message ?? String(closeError)}): ${tail}`, error);
  }
}

export interface LocalState {
  record: RunRecord;
  paths: RunPaths;
  journal: Journal;
  /** The run is live here until it is closed (or this process dies): recover and prune keep off. */
  lock: RunLock;
}

/**
 * run.json (reused when an earlier attempt left one), the lock, and the journal, reconciled with
 * the run. `pendingPath`: the pending record written before the open (undefined for a run this
 * invocation did not open); removed once run.json holds the run.
 */
export async function openLocalState(
  opts: DispatchOptions,
  deps: DispatchDeps,
  input: { run: DispatchRun; selection: Selection; idempotencyKey: string | null; origin?: 'local' | 'hosted'; pendingPath?: string | null },
): Promise<LocalState> {
  const { run } = input;
  let lock: RunLock | undefined;
  let state: LocalState;
  try {
    const existing = readRunRecord(deps.stateDir, run.id);
    const record = existing ?? {
      ...recordBase(opts, deps, input.selection, input.idempotencyKey, input.origin ?? 'local'),
      runId: run.id,
      baseSeq: run.seq,
      run,
    };
    const paths = existing ? runPaths(deps.stateDir, run.id) : createRunFolder(deps.stateDir, record);
    // Taken before the journal is touched: a run another live process holds (a second attempt
    // of a CI job while the first still runs) is left to it, its journal unread and unwritten.
    lock = acquireRunLock(deps.stateDir, run.id);
    const journal = Journal.open(paths.journal);
    if (existing) reconcileJournal(journal, record, run);
    state = { record, paths, journal, lock };
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
  return state;
}
