// `svc runs recover`: runs whose process died (crash, second Ctrl-C, lost machine) leave a journal
// without a `closed` record. For each, the run's seq (getDispatchRun) says how much of the journal the
// service stored; the rest is sent, then the run is closed — with the close the client had already
// decided on if the journal recorded one, else `interrupted` / `cancelled`. A run the reaper
// already closed is only marked done locally.
//
// A process that died between the open (openDispatchRun) and run.json leaves only a pending record (the
// open's body and idempotency key). The open is repeated with that key, which is how the service
// finds a run again: `created: false` names the run the first open made, which gets its state
// folder and is then recovered like any other (closed `interrupted`/`cancelled`). `created: true`
// means the first open never landed; there is no way to learn that without asking, and asking
// opened a run now: it is recorded and closed at once, `interrupted`/`cancelled`, so the history
// shows one cancelled attempt instead of nothing — the least surprising trace of a command that
// was started and died, and never a run left running. A 409 (its cards are in another running run)
// also proves the first open never landed (a repeated key is answered before any such check):
// nothing is opened and the pending record is dropped.
import { existsSync } from 'node:fs';
import type { CloseStatus, StopReason } from '../../contract/types.js';
import { closeRun } from '../wire/close.js';
import { EventStream } from '../wire/event-stream.js';
import { Journal } from '../wire/journal.js';
import { RunLockedError, acquireRunLock, isAlive, killLeftoverGroup, type RunLock } from './run-lock.js';
import { serviceErrorOf, type DispatchService, type ProgressSink } from '../ports.js';
import {
  createRunFolder,
  describeFsError,
  stateFolderFault,
  listPendingOpens,
  listRunRecords,
  readRunRecord,
  removePendingOpen,
  runPaths,
  type PendingOpen,
  type RunRecord,
} from './folder.js';

/** What recover asks of the service. */
export type RecoverService = Pick<DispatchService, 'getDispatchRun' | 'appendDispatchEvents' | 'closeDispatchRun' | 'openDispatchRun'>;

export interface RecoverDeps {
  stateDir: string;
  /**
   * A service bound to the run's recorded base URL (the CLI holds the token); null: skip it.
   * Called with a run.json record, or with the record of a pending open (no run id yet).
   */
  serviceFor(record: Pick<RunRecord, 'baseUrl' | 'projectKey'>): RecoverService | null;
  output: Pick<ProgressSink, 'info' | 'warn'>;
  /** Longest wait for the unacknowledged events of one run (default 60 s). */
  flushTimeoutMs?: number;
}

export interface RecoverResult {
  /** The run's id; for a pending open whose run is not known, `opening <idempotency key>`. */
  runId: string;
  /** `not-opened`: a pending open that never landed; nothing was opened. */
  action: 'closed' | 'already-closed' | 'skipped' | 'failed' | 'not-opened';
  /** Events sent now (those the service had not stored). */
  sent: number;
  stopReason: string | null;
  status: string | null;
  detail?: string;
}

/** The runs of the state folder never marked closed (optionally only `runId`). */
export function unfinishedRuns(stateDir: string, runId?: string): RunRecord[] {
  return listRunRecords(stateDir).filter((r) => {
    if (runId && r.runId !== runId) return false;
    const path = runPaths(stateDir, r.runId).journal;
    if (!existsSync(path)) return true;
    const journal = Journal.open(path);
    try {
      return !journal.closed;
    } finally {
      journal.close();
    }
  });
}

export async function recoverRuns(deps: RecoverDeps, runId?: string): Promise<RecoverResult[]> {
  const results: RecoverResult[] = [];
  // Pending opens first: one that names a run becomes a run.json record, recovered below.
  if (!runId) {
    for (const { path, pending } of listPendingOpens(deps.stateDir)) {
      const result = await recoverPending(deps, path, pending);
      if (result) results.push(result);
    }
  }
  for (const record of unfinishedRuns(deps.stateDir, runId)) results.push(await recoverOne(deps, record));
  return results;
}

/**
 * Finds the run of a pending open by repeating the open with its idempotency key, and records it
 * locally (run.json and an empty journal: no event can have been sent without a journal), so the
 * run is then recovered like any other. Null when that is all there is to say.
 */
async function recoverPending(deps: RecoverDeps, path: string, pending: PendingOpen): Promise<RecoverResult | null> {
  const base = { runId: `opening ${pending.idempotencyKey}`, sent: 0, stopReason: null, status: null };
  if (pending.owner && pending.owner.pid !== process.pid && isAlive(pending.owner)) {
    // The open is still being made (or its answer awaited) by a live process: it is not ours.
    deps.output.info(`open ${pending.idempotencyKey} is in progress in process ${pending.owner.pid}; leaving it alone`);
    return { ...base, action: 'skipped', detail: `open in progress in live process ${pending.owner.pid}` };
  }
  const service = deps.serviceFor(pending.record);
  if (!service) return { ...base, action: 'skipped', detail: `no credentials for ${pending.record.baseUrl}` };
  let opened: Awaited<ReturnType<RecoverService['openDispatchRun']>>;
  try {
    opened = await service.openDispatchRun(pending.open);
  } catch (error) {
    const fault = serviceErrorOf(error);
    if (fault.status === 409) {
      // Its cards are held by another running run: had the first open landed, the key would have
      // answered with that run before any such check. Nothing was opened, then or now.
      removePendingOpen(path);
      deps.output.info(`open ${pending.idempotencyKey} never landed (its cards are in another running run); nothing to recover`);
      return { ...base, action: 'not-opened', detail: fault.message ?? 'conflict' };
    }
    deps.output.warn(`open ${pending.idempotencyKey}: ${fault.message ?? String(error)}`);
    return { ...base, action: 'failed', detail: fault.message ?? String(error) };
  }
  const { run, created } = opened;
  if (readRunRecord(deps.stateDir, run.id)) {
    // Killed after run.json, before the pending record was removed: the run's own record rules.
    removePendingOpen(path);
    return null;
  }
  if (created) deps.output.warn(`open ${pending.idempotencyKey} had never landed; the run ${run.id} it opened now is closed at once`);
  try {
    createRunFolder(deps.stateDir, { ...pending.record, runId: run.id, baseSeq: run.seq, run });
  } catch (error) {
    // Still no place to record it: close it outright (there is nothing to send), keep the pending
    // record only if even that fails.
    const detail = `cannot record run ${run.id} under ${deps.stateDir}: ${describeFsError(error)}`;
    try {
      const closed = await closeRun(service, run.id, { stopReason: 'interrupted', status: 'cancelled' }, { warn: (m) => deps.output.warn(m) });
      removePendingOpen(path);
      return {
        ...base,
        runId: run.id,
        action: closed.kind === 'closed' ? 'closed' : 'already-closed',
        stopReason: closed.run?.stopReason ?? null,
        status: closed.run?.status ?? null,
        detail,
      };
    } catch (closeError) {
      return { ...base, runId: run.id, action: 'failed', detail: `${detail}; close: ${serviceErrorOf(closeError).message ?? String(closeError)}` };
    }
  }
  removePendingOpen(path);
  return null;
}

async function recoverOne(deps: RecoverDeps, record: RunRecord): Promise<RecoverResult> {
  const base = { runId: record.runId, sent: 0, stopReason: null, status: null };
  const service = deps.serviceFor(record);
  if (!service) return { ...base, action: 'skipped', detail: `no credentials for ${record.baseUrl}` };
  // A run another live process holds is not abandoned: closing it would fail its legs under it.
  let lock: RunLock;
  try {
    lock = acquireRunLock(deps.stateDir, record.runId);
  } catch (error) {
    if (!(error instanceof RunLockedError)) {
      const detail = stateFolderFault(error, deps.stateDir)?.message ?? describeFsError(error);
      deps.output.warn(`run ${record.runId}: ${detail}`);
      return { ...base, action: 'failed', detail };
    }
    deps.output.info(`run ${record.runId} is live in process ${error.owner.pid}; leaving it alone`);
    return { ...base, action: 'skipped', detail: `live in process ${error.owner.pid}` };
  }
  const journal = Journal.open(runPaths(deps.stateDir, record.runId).journal);
  let stream: EventStream | null = null;
  try {
    // Agents a killed svc left running (their groups are in the journal) go before the run closes:
    // a closed run must have no agent still writing to its worktrees.
    for (const agent of [...journal.agents.values()]) {
      if (killLeftoverGroup(agent)) deps.output.info(`run ${record.runId}: stopped the leftover agent of ${agent.key} (process group ${agent.pgid})`);
      journal.agentEnded(agent.pgid);
    }
    const run = await service.getDispatchRun(record.runId);
    if (run.status !== 'running') {
      journal.markClosed(run.stopReason, run.status);
      deps.output.info(`run ${record.runId} was already closed (${run.stopReason ?? '?'}, ${run.status})`);
      return { ...base, action: 'already-closed', stopReason: run.stopReason, status: run.status };
    }
    // What the service stored may be ahead of the last ack written (a crash between the answer and
    // the ack record): the run's seq is the truth.
    const stored = Math.min(journal.lastN, Math.max(0, run.seq - record.baseSeq));
    if (stored > journal.ackedN) journal.ack(stored, run.seq);
    const toSend = journal.lastN - journal.ackedN;
    let closed = false;
    stream = new EventStream({
      service,
      runId: record.runId,
      journal,
      baseSeq: record.baseSeq,
      flushIntervalMs: 50,
      onClosed: () => {
        closed = true;
      },
      warn: (m) => deps.output.warn(m),
    });
    const flushed = await stream.flush(deps.flushTimeoutMs ?? 60_000);
    await stream.stop();
    if (!flushed && !closed) {
      return { ...base, action: 'failed', sent: toSend - stream.pending, detail: `${stream.pending} event(s) still not delivered` };
    }
    const close: { stopReason: StopReason; status: CloseStatus } = journal.closing ?? { stopReason: 'interrupted', status: 'cancelled' };
    // An ambiguous failure of the close is settled by reading the run, as the engine does.
    const settled = await closeRun(service, record.runId, close, { warn: (m) => deps.output.warn(m) });
    const final = settled.run ?? (await service.getDispatchRun(record.runId));
    journal.markClosed(final.stopReason, final.status);
    if (settled.kind === 'closed-elsewhere') {
      return { ...base, action: 'already-closed', sent: toSend - stream.pending, stopReason: final.stopReason, status: final.status };
    }
    deps.output.info(`run ${record.runId}: sent ${toSend} event(s), closed ${final.stopReason ?? close.stopReason}`);
    return { ...base, action: 'closed', sent: toSend, stopReason: final.stopReason, status: final.status };
  } catch (error) {
    const fault = serviceErrorOf(error);
    deps.output.warn(`run ${record.runId}: ${fault.message ?? String(error)}`);
    return { ...base, action: 'failed', detail: fault.message ?? String(error) };
  } finally {
    await stream?.stop();
    journal.close();
    lock.release();
  }
}
