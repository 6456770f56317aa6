// `svc runs recover`: runs whose process died (crash, second Ctrl-C, lost machine) leave a journal
// without a `closed` record. For each, the run's seq (op 26) says how much of the journal the
// service stored; the rest is sent, then the run is closed — with the close the client had already
// decided on if the journal recorded one, else `interrupted` / `cancelled`. A run the reaper
// already closed is only marked done locally.
import { existsSync } from 'node:fs';
import type { CloseStatus, StopReason } from '../contract/types.js';
import { EventStream } from './event-stream.js';
import { Journal } from './journal.js';
import { isRunClosed, serviceErrorOf, type DispatchService, type ProgressSink } from './ports.js';
import { listRunRecords, runPaths, type RunRecord } from './state.js';

export interface RecoverDeps {
  stateDir: string;
  /** A service bound to the run's recorded base URL (the CLI holds the token); null: skip it. */
  serviceFor(record: RunRecord): Pick<DispatchService, 'getDispatchRun' | 'appendDispatchEvents' | 'closeDispatchRun'> | null;
  output: Pick<ProgressSink, 'info' | 'warn'>;
  /** Longest wait for the unacknowledged events of one run (default 60 s). */
  flushTimeoutMs?: number;
}

export interface RecoverResult {
  runId: string;
  action: 'closed' | 'already-closed' | 'skipped' | 'failed';
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
  for (const record of unfinishedRuns(deps.stateDir, runId)) results.push(await recoverOne(deps, record));
  return results;
}

async function recoverOne(deps: RecoverDeps, record: RunRecord): Promise<RecoverResult> {
  const base = { runId: record.runId, sent: 0, stopReason: null, status: null };
  const service = deps.serviceFor(record);
  if (!service) return { ...base, action: 'skipped', detail: `no credentials for ${record.baseUrl}` };
  const journal = Journal.open(runPaths(deps.stateDir, record.runId).journal);
  let stream: EventStream | null = null;
  try {
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
      service, runId: record.runId, journal, baseSeq: record.baseSeq, flushIntervalMs: 50,
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
    try {
      const final = await service.closeDispatchRun(record.runId, close);
      journal.markClosed(final.stopReason, final.status);
      deps.output.info(`run ${record.runId}: sent ${toSend} event(s), closed ${final.stopReason ?? close.stopReason}`);
      return { ...base, action: 'closed', sent: toSend, stopReason: final.stopReason, status: final.status };
    } catch (error) {
      if (!isRunClosed(error)) throw error;
      const now = await service.getDispatchRun(record.runId);
      journal.markClosed(now.stopReason, now.status);
      return { ...base, action: 'already-closed', sent: toSend - stream.pending, stopReason: now.stopReason, status: now.status };
    }
  } catch (error) {
    const fault = serviceErrorOf(error);
    deps.output.warn(`run ${record.runId}: ${fault.message ?? String(error)}`);
    return { ...base, action: 'failed', detail: fault.message ?? String(error) };
  } finally {
    await stream?.stop();
    journal.close();
  }
}
