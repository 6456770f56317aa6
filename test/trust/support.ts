// Shared pieces of the trust suite: quick vs full mode, seeds that replay, a digest of
// the whole store (to prove a refused request changed nothing), the journal ↔ service comparison
// of a run's event stream, and the secret scan.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DatabaseSync } from 'node:sqlite';
import type { JournalRecord } from '../../src/dispatch/wire/journal.js';
import { BIN, isolatedEnv, type CliEnv } from '../support/cli.js';
import { seededRandom } from '../support/fault-proxy.js';
export { filesUnder } from '../support/files.js';

/** `npm run soak` sets SVC_SOAK=full; `npm test` runs the quick variants. */
export const FULL = process.env.SVC_SOAK === 'full';

/** Quick or full, by mode. */
export const byMode = <T>(quick: T, full: T): T => (FULL ? full : quick);

/**
 * The seeds a test runs with: SVC_TRUST_SEED=<n> replays exactly one (printed on every failure),
 * else `count` seeds derived from `base`.
 */
export function seedsFor(base: number, count: number): number[] {
  const forced = process.env.SVC_TRUST_SEED;
  if (forced) return [Number(forced)];
  return Array.from({ length: count }, (_, i) => base + i * 7919);
}

/** A small seeded PRNG with the helpers generators need. */
export interface Rng {
  (): number;
  int(lo: number, hi: number): number;
  pick<T>(xs: readonly T[]): T;
  chance(p: number): boolean;
}

export function rng(seed: number): Rng {
  const r = seededRandom(seed) as Rng;
  r.int = (lo, hi) => lo + Math.floor(r() * (hi - lo + 1));
  r.pick = (xs) => xs[Math.floor(r() * xs.length)]!;
  r.chance = (p) => r() < p;
  return r;
}

/**
 * SQLite's count of rows written on the connection since it opened (the service's own, in-process):
 * a request after which it has not moved wrote nothing, so the digest below need not be taken.
 */
export function changeCount(db: DatabaseSync): number {
  return Number((db.prepare('SELECT total_changes() AS n').get() as { n: number }).n);
}

/**
 * SHA-256 of every row of every table, in a stable order. Two equal digests mean the store holds
 * exactly the same data. The rows are rendered by SQLite itself (`quote()` of each column, rows
 * sorted), so a digest of a few thousand rows costs about a millisecond.
 */
export function storeDigest(db: DatabaseSync): string {
  const hash = createHash('sha256');
  const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as { name: string }[];
  for (const { name } of tables) {
    const columns = (db.prepare(`PRAGMA table_info("${name}")`).all() as { name: string }[]).map((c) => `quote("${c.name}")`);
    const row = db
      .prepare(`SELECT count(*) AS n, group_concat(r, char(10)) AS rows FROM (SELECT ${columns.join(" || ',' || ")} AS r FROM "${name}" ORDER BY r)`)
      .get() as { n: number; rows: string | null };
    hash.update(`\u0000table ${name} ${row.n}\u0000${row.rows ?? ''}`);
  }
  return hash.digest('hex');
}

/** An event as the service stored it, in the shape the client sent it. */
export interface StoredEvent {
  seq: number;
  workItemKey?: string;
  disposition?: string;
  sessionBranch?: string;
  exitCode?: number;
  body?: string;
}

/** The run's stored event stream, in seq order. */
export function storedEvents(db: DatabaseSync, runId: string): StoredEvent[] {
  const rows = db
    .prepare('SELECT seq, work_item_key, disposition, session_branch, exit_code, body FROM dispatch_events WHERE run_id = ? ORDER BY seq')
    .all(runId) as {
    seq: number;
    work_item_key: string | null;
    disposition: string | null;
    session_branch: string | null;
    exit_code: number | null;
    body: string | null;
  }[];
  return rows.map((r) => ({
    seq: Number(r.seq),
    ...(r.work_item_key !== null ? { workItemKey: r.work_item_key } : {}),
    ...(r.disposition !== null ? { disposition: r.disposition } : {}),
    ...(r.session_branch !== null ? { sessionBranch: r.session_branch } : {}),
    ...(r.exit_code !== null ? { exitCode: Number(r.exit_code) } : {}),
    ...(r.body !== null ? { body: r.body } : {}),
  }));
}

export interface JournalView {
  events: { n: number; ev: Record<string, unknown> }[];
  acks: { n: number; seq: number }[];
  closing: { stopReason: string; status: string } | null;
  closed: { stopReason: string | null; status: string | null } | null;
  torn: number;
}

/** Reads a run journal as the engine wrote it (a torn last line after kill -9 is counted, not fatal). */
export function readJournal(path: string): JournalView {
  const view: JournalView = { events: [], acks: [], closing: null, closed: null, torn: 0 };
  if (!existsSync(path)) return view;
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (!line) continue;
    let r: JournalRecord;
    try {
      r = JSON.parse(line) as JournalRecord;
    } catch {
      view.torn++;
      continue;
    }
    if (r.t === 'ev') view.events.push({ n: r.n, ev: r.ev as Record<string, unknown> });
    else if (r.t === 'ack') view.acks.push({ n: r.n, seq: r.seq });
    else if (r.t === 'close') view.closing = { stopReason: r.stopReason, status: r.status };
    else if (r.t === 'closed') view.closed = { stopReason: r.stopReason, status: r.status };
  }
  return view;
}

/**
 * Where the service's stream and the journal disagree: every journal event stored once, in order,
 * at seq baseSeq + n, and nothing else stored. Empty when they agree.
 */
export function streamMismatches(stored: StoredEvent[], journal: JournalView, baseSeq: number): string[] {
  const problems: string[] = [];
  const seqs = stored.map((e) => e.seq);
  if (new Set(seqs).size !== seqs.length) problems.push(`duplicate seq in the service's stream: ${seqs.join(',')}`);
  const ns = journal.events.map((e) => e.n);
  if (ns.some((n, i) => n !== i + 1)) problems.push(`journal numbers are not 1..N: ${ns.slice(0, 20).join(',')}`);
  if (stored.length !== journal.events.length) {
    problems.push(`service stored ${stored.length} event(s), the journal holds ${journal.events.length}`);
  }
  const n = Math.min(stored.length, journal.events.length);
  for (let i = 0; i < n; i++) {
    const { seq, ...ev } = stored[i]!;
    const want = journal.events[i]!;
    if (seq !== baseSeq + want.n) problems.push(`event ${want.n}: stored at seq ${seq}, expected ${baseSeq + want.n}`);
    if (JSON.stringify(sortKeys(ev)) !== JSON.stringify(sortKeys(want.ev))) {
      problems.push(`event ${want.n} differs: service ${JSON.stringify(ev).slice(0, 200)} journal ${JSON.stringify(want.ev).slice(0, 200)}`);
    }
    if (problems.length > 10) break;
  }
  return problems;
}

function sortKeys(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b)));
}

/** `where: secret…` for each secret found in each text; empty when nothing leaked. */
export function scanForSecrets(texts: { where: string; text: string }[], secrets: readonly string[]): string[] {
  const found: string[] = [];
  for (const { where, text } of texts) {
    for (const s of secrets) if (s.length >= 8 && text.includes(s)) found.push(`${where}: ${s.slice(0, 12)}…`);
  }
  return found;
}

/** Lines that look like a JavaScript stack frame. */
export const STACK_FRAME = /^\s+at .+(\(|:\d+:\d+)/m;

/** Polls `check` every `everyMs` until it returns a value, or throws after `timeoutMs`. */
export async function waitFor<T>(what: string, check: () => T | null | undefined | false, timeoutMs = 15_000, everyMs = 25): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * A spawned svc's environment in the trust suite: its own home, config and state folders, a fast
 * heartbeat, and the file where the test agents write their pids.
 */
export function trustEnv(service: { url: string; token: string }, home: string, pids: string): CliEnv {
  return {
    ...isolatedEnv({ SVC_BASE_URL: service.url, SVC_TOKEN: service.token, SVC_PROJECT: 'DEMO', SVC_HEARTBEAT_INTERVAL: '300ms', TRUST_PIDS: pids }),
    HOME: home,
    SVC_CONFIG_DIR: join(home, 'config'),
    SVC_STATE_DIR: join(home, 'state'),
  };
}

/**
 * `svc ARGS` as a real process (signals are the point), its output collected as it comes. `stdin`
 * 'pipe' keeps its stdin open and silent, as a terminal's is (`auth login` then waits on it).
 */
export function spawnSvc(env: CliEnv, args: string[], stdin: 'ignore' | 'pipe' = 'ignore') {
  const child = spawn(process.execPath, [BIN, ...args], { env, stdio: [stdin, 'pipe', 'pipe'] });
  let stderr = '';
  let stdout = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
  return { child, done, out: () => ({ stdout, stderr }) };
}
