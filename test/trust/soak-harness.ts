// The engine as the CLI runs it (runDispatch, the real API client, the real agent runner with a
// fast shell agent, the real journal), wired to the local service through a fault proxy, plus the
// checks every soak and fault test makes afterwards: the service's event stream equals the local
// journal, exactly one run was opened, and the close is the one the run deserved.
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DatabaseSync } from 'node:sqlite';
import { createApiClient, type ApiClient } from '../../src/api/client.js';
import { dispatchServiceOf } from '../../src/dispatch/wire/service.js';
import { dispatchDeps } from '../../src/dispatch/lifecycle/deps.js';
import { runDispatch } from '../../src/dispatch/lifecycle/dispatch.js';
import type { DispatchDeps, DispatchOptions, RunSummary } from '../../src/dispatch/lifecycle/types.js';
import type { PreparedWorktree } from '../../src/dispatch/ports.js';
import { recoverRuns, type RecoverResult } from '../../src/dispatch/state/recover.js';
import type { RunRecord } from '../../src/dispatch/state/folder.js';
import { startFaultProxy, type FaultProxy, type FaultRule } from '../support/fault-proxy.js';
import { startTestService, type TestService } from '../support/service.js';
import { readJournal, storedEvents, streamMismatches, type JournalView } from './support.js';

/**
 * A fast agent: a few lines of output (one of them token-shaped, which must arrive redacted),
 * then exit 3 for the cards named in FAIL_KEYS, 0 for the others.
 */
export const AGENT_SCRIPT = `#!/bin/sh
echo "start $SVC_CARD_KEY on $SVC_BRANCH"
printf 'working %s\\n' 1 2 3
echo "a token-shaped string: ghp_$(printf 'x%.0s' 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20)"
case " $FAIL_KEYS " in *" $SVC_CARD_KEY "*) echo "boom $SVC_CARD_KEY" >&2; exit 3;; esac
echo "done $SVC_CARD_KEY"
`;

export interface SoakWorld {
  svc: TestService;
  proxy: FaultProxy;
  client: ApiClient;
  stateDir: string;
  repo: string;
  agentCmd: string;
  warnings: string[];
  close(): Promise<void>;
}

export async function startSoakWorld(opts: { seed: number; plan?: FaultRule[]; heartbeatMs?: number }): Promise<SoakWorld> {
  const svc = await startTestService({ config: { rateLimit: 1_000_000 } });
  const proxy = await startFaultProxy({ target: svc.url, seed: opts.seed, plan: opts.plan ?? [] });
  const client = createApiClient({
    baseUrl: proxy.url,
    token: svc.token,
    maxWaitMs: 60_000,
    timeoutMs: 5_000,
    retry: { baseDelayMs: 5, maxDelayMs: 100 },
  });
  const root = mkdtempSync(join(tmpdir(), 'svc-soak-'));
  const stateDir = join(root, 'state');
  const repo = join(root, 'repo');
  mkdirSync(repo, { recursive: true });
  const agent = join(root, 'agent.sh');
  writeFileSync(agent, AGENT_SCRIPT);
  chmodSync(agent, 0o755);
  return {
    svc,
    proxy,
    client,
    stateDir,
    repo,
    agentCmd: `sh ${agent}`,
    warnings: [],
    async close() {
      await client.close();
      await proxy.close();
      await svc.close();
    },
  };
}

/**
 * The soak gives each card a plain folder instead of a git worktree: the wire is under test here,
 * not git (worktrees have their own tests), and 4,000 worktrees would dominate the full soak.
 */
async function folderFor(root: string, key: string): Promise<PreparedWorktree> {
  const path = join(root, 'wt', key);
  mkdirSync(path, { recursive: true });
  return { path, branch: `svc/${key}`, created: true, headBefore: '0'.repeat(40) };
}

export function soakOptions(w: SoakWorld, over: Partial<DispatchOptions> & { failKeys?: string[] } = {}): DispatchOptions {
  const { failKeys = [], ...rest } = over;
  return {
    command: 'batch',
    keys: [],
    projectKey: w.svc.projectKey,
    baseUrl: w.proxy.url,
    repo: w.repo,
    agent: { agentCmd: w.agentCmd },
    onFailure: 'continue',
    parallel: 1,
    sendLogs: true,
    allowEmpty: true,
    timeouts: { idleMs: 30_000, cardMs: 60_000, killGraceMs: 500, runMs: null, flushMs: 20_000 },
    heartbeatIntervalMs: 250,
    worktree: true,
    dryRun: false,
    secrets: [w.svc.token],
    env: { PATH: process.env.PATH, FAIL_KEYS: failKeys.join(' ') },
    agentEnv: ['FAIL_KEYS'],
    flushIntervalMs: 20,
    ...rest,
  };
}

export function soakDeps(w: SoakWorld, signal = new AbortController().signal): DispatchDeps {
  return dispatchDeps({
    service: dispatchServiceOf(w.client),
    stateDir: w.stateDir,
    prepareWorktree: ({ key }) => folderFor(w.repo, key),
    checkoutInPlace: ({ key }) => folderFor(w.repo, key),
    commitsSince: async () => 1,
    // Plain folders have no git history to change a protected path in.
    changedPaths: async () => [],
    output: {
      legStarted: () => undefined,
      legFinished: () => undefined,
      info: () => undefined,
      warn: (m) => w.warnings.push(m),
    },
    signal,
  });
}

export const runSoak = (w: SoakWorld, opts: DispatchOptions, signal?: AbortSignal): Promise<RunSummary> => runDispatch(opts, soakDeps(w, signal));

/** Sends what a run left unsent and closes it, as `svc runs recover` does (straight to the service). */
export function recoverAll(w: SoakWorld): Promise<RecoverResult[]> {
  const direct = createApiClient({ baseUrl: w.svc.url, token: w.svc.token, maxWaitMs: 5_000, retry: { baseDelayMs: 5, maxDelayMs: 50 } });
  return recoverRuns({
    stateDir: w.stateDir,
    serviceFor: () => dispatchServiceOf(direct),
    output: { info: () => undefined, warn: (m) => w.warnings.push(m) },
  }).finally(() => direct.close());
}

export interface RunRow {
  id: string;
  status: string;
  stop_reason: string | null;
  seq: number;
}

export const runRows = (w: SoakWorld): RunRow[] => rowsOf(w.svc.db);

export function rowsOf(db: DatabaseSync): RunRow[] {
  return (db.prepare('SELECT id, status, stop_reason, seq FROM dispatch_runs ORDER BY started_at, id').all() as unknown as RunRow[]).map((r) => ({
    ...r,
    seq: Number(r.seq),
  }));
}

export function journalOf(stateDir: string, runId: string): { journal: JournalView; record: RunRecord } {
  const dir = join(stateDir, 'runs', runId);
  return { journal: readJournal(join(dir, 'journal.jsonl')), record: JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8')) as RunRecord };
}

/** Last disposition the journal recorded per card. */
export function journalDispositions(journal: JournalView): Map<string, string> {
  const last = new Map<string, string>();
  for (const { ev } of journal.events) {
    if (typeof ev.workItemKey === 'string' && typeof ev.disposition === 'string') last.set(ev.workItemKey, ev.disposition);
  }
  return last;
}

/**
 * Everything that must hold between the service and the journal of one run: the same events in the
 * same order at the right seqs, no duplicate, the run's seq at the journal's end, each card's
 * disposition as the journal last said (or settled by the close), and no token in a stored body.
 */
export function agreementProblems(w: SoakWorld, runId: string): string[] {
  return agreement(w.svc.db, w.stateDir, runId, [w.svc.token]);
}

/** The same checks against any store (a spawned server's database file) and state folder. */
export function agreement(db: DatabaseSync, stateDir: string, runId: string, secrets: readonly string[]): string[] {
  const { journal, record } = journalOf(stateDir, runId);
  const problems = streamMismatches(storedEvents(db, runId), journal, record.baseSeq);
  const row = rowsOf(db).find((r) => r.id === runId);
  if (!row) return [`run ${runId} is not on the service`];
  if (row.seq !== record.baseSeq + journal.events.length) problems.push(`run seq ${row.seq}, journal ends at ${record.baseSeq + journal.events.length}`);
  const cards = db.prepare('SELECT work_item_key AS key, disposition FROM dispatch_cards WHERE run_id = ? ORDER BY position').all(runId) as {
    key: string;
    disposition: string;
  }[];
  const last = journalDispositions(journal);
  for (const c of cards) {
    const j = last.get(c.key);
    if (j === 'implemented' || j === 'failed') {
      if (c.disposition !== j) problems.push(`${c.key}: service ${c.disposition}, journal ${j}`);
    } else if (j === 'running') {
      // Left running by a crash or a signal: the close settles it `failed`.
      if (row.status !== 'running' && c.disposition !== 'failed') problems.push(`${c.key}: journal running, service ${c.disposition} after the close`);
    } else if (row.status !== 'running' && !['not_reached', 'skipped'].includes(c.disposition)) {
      problems.push(`${c.key}: never started per the journal, service says ${c.disposition}`);
    }
  }
  for (const e of storedEvents(db, runId)) {
    if (e.body && (secrets.some((t) => e.body!.includes(t)) || /ghp_x{20}/.test(e.body))) problems.push(`seq ${e.seq}: a token reached a stored body`);
  }
  return problems;
}
