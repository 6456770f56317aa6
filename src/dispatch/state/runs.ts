// What this machine knows of its runs, from the state folder alone (no request): `svc runs list`,
// the run order of `svc logs`, and `svc runs cancel` for a run nobody is running.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SvcError } from '../../api/errors.js';
import type { DispatchRun } from '../../contract/types.js';
import { closeRun } from '../wire/close.js';
import { Journal } from '../wire/journal.js';
import type { DispatchService } from '../ports.js';
import { isRunLive } from './run-lock.js';
import { listRunRecords, readRunRecord, runPaths, type RunRecord } from './folder.js';
import { makeDirs } from './make-dirs.js';

/** One row of `svc runs list`. */
export interface LocalRunRow {
  id: string;
  command: string;
  /** Cards of the set, and how many of them landed, failed, were skipped. */
  cards: { total: number; implemented: number; failed: number; skipped: number };
  /** The close the service confirmed, else `closing` (decided, not confirmed), `running` (live
   * here), `open` (not live here: hosted, or left for `svc runs recover`). */
  status: string;
  stopReason: string | null;
  started: string;
  /** `local <repo>` or `hosted`. */
  where: string;
  live: boolean;
}

interface JournalFacts {
  dispositions: Map<string, string>;
  closed: { stopReason: string | null; status: string | null } | null;
  closing: { stopReason: string; status: string } | null;
}

/** The legs' last dispositions and the close records, read line by line from the journal. */
function journalFacts(path: string): JournalFacts {
  const facts: JournalFacts = { dispositions: new Map(), closed: null, closing: null };
  if (!existsSync(path)) return facts;
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (!line.startsWith('{')) continue;
    let r: { t?: string; ev?: { workItemKey?: string; disposition?: string }; stopReason?: string | null; status?: string | null };
    try {
      r = JSON.parse(line);
    } catch {
      continue; // a torn last line
    }
    if (r.t === 'ev' && r.ev?.workItemKey && r.ev.disposition) facts.dispositions.set(r.ev.workItemKey, r.ev.disposition);
    else if (r.t === 'closed') facts.closed = { stopReason: r.stopReason ?? null, status: r.status ?? null };
    else if (r.t === 'close' && r.stopReason && r.status) facts.closing = { stopReason: r.stopReason, status: r.status };
  }
  return facts;
}

function rowOf(stateDir: string, record: RunRecord): LocalRunRow {
  const facts = journalFacts(runPaths(stateDir, record.runId).journal);
  const live = isRunLive(stateDir, record.runId);
  const values = [...facts.dispositions.values()];
  const origin = record.options.origin ?? 'local';
  const repo = record.options.repo ?? '';
  return {
    id: record.runId,
    command: record.command === 'continue' ? `continue (${record.originalCommand})` : record.command,
    cards: {
      total: record.cards.length,
      implemented: values.filter((d) => d === 'implemented').length,
      failed: values.filter((d) => d === 'failed').length,
      skipped: record.cards.filter((c) => c.skipReason).length,
    },
    status: facts.closed?.status ?? (live ? 'running' : facts.closing ? 'closing' : 'open'),
    stopReason: facts.closed?.stopReason ?? facts.closing?.stopReason ?? null,
    started: record.openedAt,
    where: origin === 'hosted' ? 'hosted' : `local ${repo}`.trim(),
    live,
  };
}

/**
 * A `--hosted` open is noted in `<state>/hosted/<id>.json` (not as a run folder: nothing runs here,
 * and `svc runs recover` must never close a run a hosted runner may still pick up).
 */
interface HostedNote {
  runId: string;
  command: string;
  cards: number;
  skipped: number;
  openedAt: string;
  closed: { status: string; stopReason: string | null } | null;
}

function hostedNotePath(stateDir: string, runId: string): string {
  runPaths(stateDir, runId);
  return join(stateDir, 'hosted', `${runId}.json`);
}

/** Notes a run opened with `--hosted`, so `svc runs list` shows it and `svc runs cancel` finds it. */
export function noteHostedOpen(stateDir: string, run: DispatchRun): void {
  makeDirs(join(stateDir, 'hosted'), 0o700);
  const note: HostedNote = {
    runId: run.id,
    command: run.command,
    cards: run.cards.length,
    skipped: run.cards.filter((c) => c.skipReason).length,
    openedAt: run.startedAt,
    closed: null,
  };
  writeFileSync(hostedNotePath(stateDir, run.id), `${JSON.stringify(note)}\n`, { mode: 0o600 });
}

function readHostedNote(stateDir: string, runId: string): HostedNote | null {
  try {
    return JSON.parse(readFileSync(hostedNotePath(stateDir, runId), 'utf8')) as HostedNote;
  } catch {
    return null;
  }
}

function hostedRows(stateDir: string, known: Set<string>): LocalRunRow[] {
  const dir = join(stateDir, 'hosted');
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .map((f) => readHostedNote(stateDir, f.slice(0, -5)))
    .filter((n): n is HostedNote => n !== null && !known.has(n.runId))
    .map((n) => ({
      id: n.runId,
      command: n.command,
      cards: { total: n.cards, implemented: 0, failed: 0, skipped: n.skipped },
      status: n.closed?.status ?? 'open',
      stopReason: n.closed?.stopReason ?? null,
      started: n.openedAt,
      where: 'hosted',
      live: false,
    }));
}

function settleHostedNote(stateDir: string, runId: string, run: Pick<DispatchRun, 'status' | 'stopReason'>): void {
  const note = readHostedNote(stateDir, runId);
  if (note)
    writeFileSync(hostedNotePath(stateDir, runId), `${JSON.stringify({ ...note, closed: { status: run.status, stopReason: run.stopReason } })}\n`, {
      mode: 0o600,
    });
}

/** Every run recorded here, newest first. */
export function listLocalRuns(stateDir: string): LocalRunRow[] {
  const local = listRunRecords(stateDir).map((r) => rowOf(stateDir, r));
  return [...local, ...hostedRows(stateDir, new Set(local.map((r) => r.id)))].sort((a, b) =>
    a.started < b.started ? 1 : a.started > b.started ? -1 : a.id < b.id ? 1 : -1,
  );
}

/**
 * The logs of a run in run order: its cards in the set's order (the order legs start in), then
 * any other leg log, then the close-out of a scoped run last. Names are log file stems.
 */
export function logsInRunOrder(stateDir: string, runId: string): string[] {
  const paths = runPaths(stateDir, runId);
  const stems = readdirSync(paths.logs)
    .filter((f) => f.endsWith('.log'))
    .map((f) => f.slice(0, -4));
  const present = new Set(stems);
  const order = (readRunRecord(stateDir, runId)?.cards ?? []).map((c) => c.workItemKey).filter((k) => present.has(k));
  const placed = new Set(order);
  const closeOuts = stems.filter((s) => s.endsWith('.close-out')).sort();
  const rest = stems.filter((s) => !placed.has(s) && !s.endsWith('.close-out')).sort();
  return [...order, ...rest, ...closeOuts];
}

/** A run this command must not touch: live here, or with events only this machine holds. */
export class CancelRefusedError extends SvcError {
  readonly kind = 'failed';
}

export type CancelOutcome = { action: 'cancelled' | 'already closed'; status: string; stopReason: string | null };

/**
 * `svc runs cancel RUN`: closes a run nobody is running (a `--hosted` run no runner picked up, a
 * local run left open) as `interrupted`/`cancelled`. A run live on this machine is refused (stop
 * it with Ctrl-C), and so is one whose journal holds undelivered events (`svc runs recover` sends
 * them first: a disposition is never dropped).
 */
export async function cancelRun(
  service: Pick<DispatchService, 'getDispatchRun' | 'closeDispatchRun'>,
  stateDir: string,
  runId: string,
): Promise<CancelOutcome> {
  runPaths(stateDir, runId);
  if (isRunLive(stateDir, runId)) throw new CancelRefusedError(`run ${runId} is live on this machine; stop it with Ctrl-C in its terminal`);
  const record = readRunRecord(stateDir, runId);
  const journalPath = runPaths(stateDir, runId).journal;
  const journal = record && existsSync(journalPath) ? Journal.open(journalPath) : null;
  try {
    if (journal && journal.lastN > journal.ackedN) {
      throw new CancelRefusedError(
        `run ${runId} has ${journal.lastN - journal.ackedN} event(s) only this machine holds; \`svc runs recover ${runId}\` sends them and closes it`,
      );
    }
    const run = await service.getDispatchRun(runId);
    if (run.status !== 'running') {
      if (journal && !journal.closed) journal.markClosed(run.stopReason, run.status);
      settleHostedNote(stateDir, runId, run);
      return { action: 'already closed', status: run.status, stopReason: run.stopReason };
    }
    const closed = await closeRun(service, runId, { stopReason: 'interrupted', status: 'cancelled' }, { warn: () => undefined });
    const final = closed.run ?? (await service.getDispatchRun(runId));
    if (journal && !journal.closed) journal.markClosed(final.stopReason, final.status);
    settleHostedNote(stateDir, runId, final);
    return { action: closed.kind === 'closed' ? 'cancelled' : 'already closed', status: final.status, stopReason: final.stopReason };
  } finally {
    journal?.close();
  }
}
