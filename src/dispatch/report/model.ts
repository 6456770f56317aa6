// Builds a RunReport from what the run left on this machine: run.json (command, scope, cards),
// the journal (when each leg started and ended, dispositions, exit codes, the close), legs.jsonl
// (reasons, spend, base commits), the logs (tails) and git (commits, diff --stat). Nothing is asked
// of the service, so a run recovered later, or reported on another day, reports the same.
import { visibleHost } from '../fence/refusal.js';
import { closeSync, existsSync, fstatSync, openSync, readSync } from 'node:fs';
import { createReadStream } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { runOk } from '../process/run.js';
import { SvcError } from '../../api/errors.js';
import type { JournalRecord } from '../wire/journal.js';
import { createRedactor } from '../redact.js';
import { logPath, readRunRecord, runPaths, type RunPaths } from '../state/folder.js';
import { readLegRecords, type LegRecord } from './record.js';
import type { LegReport, ReportCommit, RunReport } from './types.js';

export interface ReportOptions {
  /** Tokens in play, redacted besides the well-known shapes (the same redaction as logs). */
  secrets: readonly string[];
  /** Lines of each leg's log kept (default 40). */
  tailLines?: number;
}

/** No local state for a run: exit 4, like a missing log. */
export class RunNotFoundLocallyError extends SvcError {
  readonly kind = 'notFound';
}

interface JournalLeg {
  startedAt: string | null;
  endedAt: string | null;
  disposition: string | null;
  exitCode: number | null;
  branch: string | null;
}

/** What the journal tells: per card, and the run's close and its last moment. */
async function readJournal(paths: RunPaths) {
  const legs = new Map<string, JournalLeg>();
  let close = null as { stopReason: string | null; status: string | null } | null;
  let last = null as string | null;
  if (!existsSync(paths.journal)) return { legs, close, last };
  const lines = createInterface({ input: createReadStream(paths.journal, 'utf8'), crlfDelay: Infinity });
  for await (const line of lines) {
    let r: JournalRecord;
    try {
      r = JSON.parse(line) as JournalRecord;
    } catch {
      continue;
    }
    if (r.t === 'close' && !close) close = { stopReason: r.stopReason, status: r.status };
    else if (r.t === 'closed') close = { stopReason: r.stopReason ?? close?.stopReason ?? null, status: r.status ?? close?.status ?? null };
    if (r.t !== 'ev') continue;
    if (!last || r.at > last) last = r.at;
    const key = r.ev.workItemKey;
    if (!key || !r.ev.disposition) continue;
    const leg = legs.get(key) ?? { startedAt: null, endedAt: null, disposition: null, exitCode: null, branch: null };
    if (r.ev.disposition === 'running') {
      leg.startedAt ??= r.at;
      leg.endedAt = null;
    } else {
      leg.endedAt = r.at;
    }
    leg.disposition = r.ev.disposition;
    if (r.ev.exitCode !== undefined) leg.exitCode = r.ev.exitCode;
    if (r.ev.sessionBranch) leg.branch = r.ev.sessionBranch;
    legs.set(key, leg);
  }
  return { legs, close, last };
}

// CSI/OSC sequences and other C0 controls agents print for terminals.
const ESCAPES = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/g;

/** The last `lines` lines of a file, read from its end (a log may be large). */
export function tailOf(file: string, lines: number, redact: (t: string) => string): string | null {
  if (!existsSync(file)) return null;
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    const want = Math.min(size, 64 * 1024);
    const buf = Buffer.alloc(want);
    readSync(fd, buf, 0, want, size - want);
    let text = buf.toString('utf8').replace(/\r\n?/g, '\n');
    if (want < size) text = text.slice(text.indexOf('\n') + 1);
    const kept = text.replace(ESCAPES, '').replace(/\n+$/, '').split('\n').slice(-lines).join('\n');
    return redact(kept);
  } finally {
    closeSync(fd);
  }
}

/** Commits and diff --stat of base..head; empty/null when the objects are gone. */
async function gitOf(repo: string | null, base: string | null, head: string | null): Promise<{ commits: ReportCommit[]; diffStat: string | null }> {
  if (!repo || !base || !head || !existsSync(repo)) return { commits: [], diffStat: null };
  try {
    const log = await runOk('git', ['log', '--format=%h%x09%s', '--no-decorate', `${base}..${head}`], { cwd: repo, maxBuffer: 8 << 20, timeoutMs: 0 });
    const stat = await runOk('git', ['diff', '--stat=100', base, head], { cwd: repo, maxBuffer: 8 << 20, timeoutMs: 0 });
    const commits = log
      .split('\n')
      .filter(Boolean)
      .map((l) => {
        const tab = l.indexOf('\t');
        return { sha: l.slice(0, tab), subject: l.slice(tab + 1) };
      });
    return { commits, diffStat: stat.replace(/\n+$/, '') || null };
  } catch {
    return { commits: [], diffStat: null };
  }
}

function spanMs(a: string | null, b: string | null): number | null {
  return a && b ? Math.max(0, Date.parse(b) - Date.parse(a)) : null;
}

async function legReport(
  key: string,
  skipReason: string | null,
  rec: LegRecord | undefined,
  j: JournalLeg | undefined,
  closed: boolean,
  logFile: string,
  redact: (t: string) => string,
  tail: number,
): Promise<LegReport> {
  let disposition = rec?.disposition ?? j?.disposition ?? (skipReason ? 'skipped' : 'not_reached');
  // A leg the journal last saw running in a closed run never finished: the service calls it failed.
  if (disposition === 'running' && closed) disposition = 'failed';
  const startedAt = rec?.startedAt ?? j?.startedAt ?? null;
  const endedAt = rec?.endedAt ?? j?.endedAt ?? null;
  const ran = startedAt !== null;
  const { commits, diffStat } = await gitOf(rec?.repo ?? null, rec?.base ?? null, rec?.head ?? null);
  return {
    key,
    title: rec?.title ?? null,
    disposition,
    skipReason,
    reason: rec?.reason ? redact(rec.reason) : disposition === 'failed' ? (closed && !rec ? 'the run closed while the leg ran' : 'failed') : null,
    startedAt,
    endedAt,
    durationMs: rec?.durationMs ?? spanMs(startedAt, endedAt),
    exitCode: rec?.exitCode ?? j?.exitCode ?? null,
    costUsd: rec?.costUsd ?? null,
    tokens: rec?.tokens ?? { in: null, out: null },
    branch: rec?.sessionBranch ?? j?.branch ?? null,
    base: rec?.base ?? null,
    head: rec?.head ?? null,
    // An agent writes commit messages and file names too: they are output like its log.
    commits: commits.map((c) => ({ sha: c.sha, subject: redact(c.subject) })),
    diffStat: diffStat === null ? null : redact(diffStat),
    logTail: ran ? tailOf(logFile, tail, redact) : null,
    check: rec?.check
      ? { ...rec.check, output: rec.check.output === null ? null : redact(rec.check.output) }
      : { status: 'none', command: null, exitCode: null, output: null },
    attempts: rec?.attempts ?? null,
    // A host is what the leg asked for: shown with its controls made visible, like its log.
    network: rec?.network ? { mode: rec.network.mode, refused: rec.network.refused.map((r) => ({ ...r, host: visibleHost(r.host) })) } : null,
    // An attempt's reason can carry an agent's words (a stream's error): redacted like the leg's.
    ...(rec?.bestOf
      ? {
          bestOf: {
            ...rec.bestOf,
            why: redact(rec.bestOf.why),
            attempts: rec.bestOf.attempts.map((a) => ({ ...a, reason: a.reason === null ? null : redact(a.reason) })),
          },
        }
      : {}),
  };
}

const sum = (xs: (number | null)[]): number | null => (xs.some((x) => x !== null) ? xs.reduce<number>((a, x) => a + (x ?? 0), 0) : null);

/** Sums of binary fractions drift (0.43699999…); a micro-dollar is finer than any agent reports. */
const roundUsd = (x: number | null) => (x === null ? null : Math.round(x * 1e6) / 1e6);

/** The report of one run, from this machine's state folder. */
export async function buildRunReport(stateDir: string, runId: string, opts: ReportOptions): Promise<RunReport> {
  const paths = runPaths(stateDir, runId);
  const record = readRunRecord(stateDir, runId);
  if (!record) throw new RunNotFoundLocallyError(`no local state for run ${runId} on this machine (looked in ${paths.dir})`);
  const redact = createRedactor(opts.secrets);
  const tail = opts.tailLines ?? 40;
  const journal = await readJournal(paths);
  const records = readLegRecords(paths);
  const byKey = new Map<string, LegRecord>();
  let closeOutRec: LegRecord | undefined;
  for (const r of records) {
    if (r.closeOut) closeOutRec = r;
    else byKey.set(r.key, r);
  }
  const opened = new Map((record.run?.cards ?? []).map((c) => [c.workItemKey, c]));
  const closed = journal.close !== null;
  const legs: LegReport[] = [];
  for (const card of record.cards) {
    const skip = card.skipReason ?? opened.get(card.workItemKey)?.skipReason ?? null;
    legs.push(
      await legReport(
        card.workItemKey,
        skip,
        byKey.get(card.workItemKey),
        journal.legs.get(card.workItemKey),
        closed,
        logPath(paths, card.workItemKey),
        redact,
        tail,
      ),
    );
  }
  const closeOut = closeOutRec
    ? await legReport(closeOutRec.key, null, closeOutRec, undefined, closed, join(paths.logs, `${closeOutRec.key}.close-out.log`), redact, tail)
    : null;
  const ends = [journal.last, ...records.map((r) => r.endedAt)].filter((x): x is string => Boolean(x)).sort();
  const endedAt = ends.length ? ends[ends.length - 1]! : null;
  const all = closeOut ? [...legs, closeOut] : legs;
  const count = (d: string) => legs.filter((l) => l.disposition === d).length;
  return {
    runId,
    projectKey: record.projectKey,
    command: record.command,
    originalCommand: record.originalCommand,
    scopeKey: record.scopeKey,
    agent: record.run?.agent ?? null,
    model: record.run?.model ?? null,
    status: journal.close?.status ?? 'running',
    stopReason: journal.close?.stopReason ?? null,
    startedAt: record.openedAt,
    endedAt,
    durationMs: spanMs(record.openedAt, endedAt),
    totals: {
      cards: legs.length,
      implemented: count('implemented'),
      failed: count('failed'),
      skipped: count('skipped'),
      notReached: count('not_reached'),
      running: count('running'),
      costUsd: roundUsd(sum(all.map((l) => l.costUsd))),
      tokens: { in: sum(all.map((l) => l.tokens.in)), out: sum(all.map((l) => l.tokens.out)) },
    },
    legs,
    closeOut,
  };
}
