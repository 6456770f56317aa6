// Crash and signals, with a real `svc run` process against `svc server` (run in the
// test's process) and a fake agent that prints a few lines.
// - kill -9 the CLI at seeded random moments of its run (quick: 3, full: 20); `svc runs recover`
//   must then leave the service in agreement with the journal (same events, same order, no
//   duplicate) and the run closed: `interrupted`/`cancelled`, or the close the journal had already
//   decided. No run may be left running on the service, even one killed right after its open.
// - SIGINT: the agents are stopped (their process group is gone), the run closes
//   `interrupted`/`cancelled`, exit 130. SIGTERM: the same, exit 143.
// What is killed or signalled is a real process; `svc runs recover` after it runs in this process.
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { openDatabase, type Database } from '../../src/server/db.js';
import { createAdmin } from '../../src/server/admin.js';
import { MODULES } from '../../src/server/modules.js';
import { makeRepo, runCli, type CliEnv } from '../support/cli.js';
import { startFaultProxy } from '../support/fault-proxy.js';
import { svcInProcess } from '../support/svc-in-process.js';
import { startLocalServer, type LocalServer } from '../support/server-process.js';
import { agreement, journalOf, rowsOf } from './soak-harness.js';
import { byMode, rng, seedsFor, waitFor, spawnSvc, trustEnv } from './support.js';

const KILLS = byMode(3, 20);
const SEED = seedsFor(4242, 1)[0]!;

let server: LocalServer;
let db: Database;
let root: string;
let agentCmd: string;
let slowAgentCmd: string;
let stubbornAgentCmd: string;
const pidFile = () => join(root, 'pids');

beforeAll(async () => {
  server = await startLocalServer();
  db = openDatabase(server.db, MODULES);
  root = mkdtempSync(join(tmpdir(), 'svc-crash-'));
  const agent = join(root, 'agent.sh');
  writeFileSync(
    agent,
    `#!/bin/sh
echo $$ >> "$TRUST_PIDS"
for i in 1 2 3 4; do echo "tick $i of $SVC_CARD_KEY"; sleep 0.05; done
`,
  );
  const slow = join(root, 'slow-agent.sh');
  // Records its process group (it leads one: the runner starts each agent in its own), then waits.
  writeFileSync(
    slow,
    `#!/bin/sh
echo $$ >> "$TRUST_PIDS"
echo "started $SVC_CARD_KEY"
sleep 30
echo "not reached"
`,
  );
  // The same, deaf to SIGTERM (its `sleep` inherits that): the first SIGINT's wind-down then waits
  // out the kill grace, so a second SIGINT surely lands while the run is still closing.
  const stubborn = join(root, 'stubborn-agent.sh');
  writeFileSync(
    stubborn,
    `#!/bin/sh
trap '' TERM
echo $$ >> "$TRUST_PIDS"
echo "started $SVC_CARD_KEY"
sleep 30
echo "not reached"
`,
  );
  chmodSync(agent, 0o755);
  chmodSync(slow, 0o755);
  chmodSync(stubborn, 0o755);
  agentCmd = `sh ${agent}`;
  slowAgentCmd = `sh ${slow}`;
  stubbornAgentCmd = `sh ${stubborn}`;
});

afterAll(async () => {
  // Agents orphaned by kill -9 (they lead their own process groups): end them.
  if (root && existsSync(pidFile())) {
    for (const pid of readFileSync(pidFile(), 'utf8').split('\n').filter(Boolean).map(Number)) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
  }
  db?.close();
  const violations = await server?.stop();
  expect(violations ?? [], 'responses that break the contract document').toEqual([]);
});

/** Fresh cards for one invocation (the demo's own are shared by other tests). */
function cards(n: number): string[] {
  const admin = createAdmin(db);
  return Array.from({ length: n }, (_, i) => admin.createWorkItem({ projectKey: 'DEMO', kind: 'task', title: `crash card ${i}`, type: 'chore' }).key);
}

const envFor = (home: string): CliEnv => trustEnv(server, home, pidFile());

/** The pids the test agents have written so far, oldest first. */
const agentPids = (): string[] => (existsSync(pidFile()) ? readFileSync(pidFile(), 'utf8').split('\n').filter(Boolean) : []);

/**
 * `svc run` on two fresh cards in a home of its own, with `--agent-cmd agent --kill-grace killGrace`,
 * once its first agent has started: what the signal tests send their signals to. `pid` is that
 * agent's (it leads its own process group); `before`, the service's runs before this one.
 */
async function startSignalRun(agent: string, killGrace: string) {
  const home = mkdtempSync(join(tmpdir(), 'svc-signal-home-'));
  const env = envFor(home);
  const stateDir = join(home, 'state');
  const before = new Set(rowsOf(db).map((x) => x.id));
  const seenPids = agentPids().length;
  const run = spawnSvc(env, [
    'run',
    ...cards(2),
    '--agent-cmd',
    agent,
    '--agent-env',
    'TRUST_PIDS',
    '--send-logs',
    '--allow-empty',
    '--kill-grace',
    killGrace,
    '--repo',
    await makeRepo(),
  ]);
  const pid = await waitFor(
    'the agent to start',
    () => {
      const pids = agentPids();
      return pids.length > seenPids ? Number(pids[pids.length - 1]) : null;
    },
    20_000,
  );
  return { env, stateDir, before, run, pid };
}

const runIdsIn = (stateDir: string): string[] => (existsSync(join(stateDir, 'runs')) ? readdirSync(join(stateDir, 'runs')) : []);

/** Every problem between the service and the state folder, plus runs left running on the service. */
function problemsAfter(stateDir: string, before: Set<string>): string[] {
  const problems: string[] = [];
  for (const runId of runIdsIn(stateDir)) {
    problems.push(...agreement(db, stateDir, runId, [server.token]).map((p) => `${runId}: ${p}`));
    const row = rowsOf(db).find((r) => r.id === runId);
    const { journal } = journalOf(stateDir, runId);
    const want = journal.closing ?? { stopReason: 'interrupted', status: 'cancelled' };
    if (row && (row.status !== want.status || row.stop_reason !== want.stopReason)) {
      problems.push(`${runId}: closed ${row.stop_reason}/${row.status}, expected ${want.stopReason}/${want.status}`);
    }
    if (!journal.closed) problems.push(`${runId}: the journal was not marked closed`);
  }
  for (const row of rowsOf(db)) {
    if (!before.has(row.id) && row.status === 'running') problems.push(`${row.id}: left running on the service, unknown to the state folder`);
  }
  return problems;
}

describe('kill -9 at random points, then svc runs recover', () => {
  let fullRunMs = 2_000;

  test('calibration: an uninterrupted run agrees with its journal and closes completed', async () => {
    const home = mkdtempSync(join(tmpdir(), 'svc-crash-home-'));
    const env = envFor(home);
    const before = new Set(rowsOf(db).map((r) => r.id));
    const started = Date.now();
    const r = await runCli(
      ['run', ...cards(5), '--agent-cmd', agentCmd, '--agent-env', 'TRUST_PIDS', '--send-logs', '--allow-empty', '--repo', await makeRepo()],
      { env },
    );
    fullRunMs = Date.now() - started;
    expect(r.code, r.stderr).toBe(0);
    expect(problemsAfter(join(home, 'state'), before)).toEqual([]);
    const [runId] = runIdsIn(join(home, 'state'));
    expect(journalOf(join(home, 'state'), runId!).journal.closed).toEqual({ stopReason: 'completed', status: 'succeeded' });
  });

  // The kills go four at a time (each its own home, cards and repository): a run mostly waits on
  // its agents, so side by side they cost little more than one. Every run of a batch is recovered
  // before any is checked, so "left running on the service" still means what it did.
  test(
    `${KILLS} kills at seeded moments (seed ${SEED}): recover leaves the service agreeing with every journal, every run closed`,
    async () => {
      const r = rng(SEED);
      const report: string[] = [];
      // Anywhere from the start-up to past the end of a normal run (drawn in order, as before).
      const moments = Array.from({ length: KILLS }, () => r.int(20, Math.round(fullRunMs * 1.1)));
      for (let first = 0; first < KILLS; first += 4) {
        const batch = moments.slice(first, first + 4).map((killAt, i) => ({ k: first + i, killAt, home: mkdtempSync(join(tmpdir(), 'svc-crash-home-')) }));
        const before = new Set(rowsOf(db).map((x) => x.id));
        const ended = await Promise.all(
          batch.map(async ({ killAt, home }) => {
            const run = spawnSvc(envFor(home), [
              'run',
              ...cards(5),
              '--agent-cmd',
              agentCmd,
              '--agent-env',
              'TRUST_PIDS',
              '--send-logs',
              '--allow-empty',
              '--repo',
              await makeRepo(),
            ]);
            await new Promise((resolve) => setTimeout(resolve, killAt));
            run.child.kill('SIGKILL');
            return run.done;
          }),
        );
        const recovered = await Promise.all(batch.map(({ home }) => svcInProcess(['runs', 'recover'], { env: envFor(home) })));
        for (const [i, { k, killAt, home }] of batch.entries()) {
          const stateDir = join(home, 'state');
          const where = `kill #${k} at ${killAt} ms (seed ${SEED}, replay: SVC_TRUST_SEED=${SEED}; ended ${ended[i]!.signal ?? ended[i]!.code}; recover exit ${recovered[i]!.code}: ${recovered[i]!.stderr.trim().slice(0, 300)})`;
          expect(recovered[i]!.code, where).toBe(0);
          const problems = problemsAfter(stateDir, before);
          expect(problems, where).toEqual([]);
          const runs = runIdsIn(stateDir);
          report.push(`${killAt}ms→${runs.length ? rowsOf(db).find((x) => x.id === runs[0])?.stop_reason : 'no run'}`);
        }
        // A second recover finds nothing left to do.
        for (const again of await Promise.all(batch.map(({ home }) => svcInProcess(['runs', 'recover', '--json'], { env: envFor(home) })))) {
          expect(again.code, again.stderr).toBe(0);
        }
      }
      console.log(`crash kills (seed ${SEED}): ${report.join(', ')}`);
    },
    byMode(90_000, 600_000),
  );
});

/** `pid state command` of the live processes in process group `pgid` (from /proc). */
function groupMembers(pgid: number): string[] {
  const out: string[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) === pgid) out.push(`${name} ${fields[0]} ${stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))}`);
    } catch {
      // Gone meanwhile.
    }
  }
  return out;
}

describe('a run opened but never recorded locally', () => {
  // The run is recorded locally (base URL, idempotency key) before it is opened (eb55467); until
  // then a state folder that could not be written — or a kill -9 between the open's answer and
  // run.json — left the run `running` on the service, unknown to `svc runs recover`.
  test('a state folder that cannot be written leaves no run running on the service', async () => {
    const home = mkdtempSync(join(tmpdir(), 'svc-crash-home-'));
    writeFileSync(join(home, 'not-a-folder'), '');
    const env = { ...envFor(home), SVC_STATE_DIR: join(home, 'not-a-folder', 'state') };
    const before = new Set(rowsOf(db).map((x) => x.id));
    const r = await svcInProcess(['run', ...cards(1), '--agent-cmd', agentCmd, '--agent-env', 'TRUST_PIDS', '--allow-empty', '--repo', await makeRepo()], {
      env,
    });
    expect(r.code).not.toBe(0);
    const left = rowsOf(db).filter((x) => !before.has(x.id) && x.status === 'running');
    expect(
      left.map((x) => x.id),
      r.stderr,
    ).toEqual([]);
  });
});

describe('kill -9 while the open is in flight', () => {
  // A proxy holds the open for 1.5 s; svc is killed while it waits, and the proxy then delivers
  // the open to the service: a run exists that svc never heard of. Its pending record (written
  // before the open) lets `svc runs recover` find it by its idempotency key and close it.
  test('the service applies the open after svc died: recover finds the run and closes it interrupted', async () => {
    const proxy = await startFaultProxy({
      target: server.url,
      plan: [{ method: 'POST', path: /^\/api\/v1\/dispatch-runs$/, fault: { kind: 'latency', ms: 1500 } }],
    });
    try {
      const home = mkdtempSync(join(tmpdir(), 'svc-crash-home-'));
      const env = { ...envFor(home), SVC_BASE_URL: proxy.url };
      const stateDir = join(home, 'state');
      const before = new Set(rowsOf(db).map((x) => x.id));
      const run = spawnSvc(env, ['run', ...cards(2), '--agent-cmd', agentCmd, '--agent-env', 'TRUST_PIDS', '--allow-empty', '--repo', await makeRepo()]);
      await waitFor('the open to reach the proxy', () => proxy.requests('POST', /^\/api\/v1\/dispatch-runs$/).length > 0, 20_000);
      run.child.kill('SIGKILL');
      await run.done;
      // The proxy forwards the held open once its latency is over; the service opens the run.
      const opened = await waitFor('the service to open the run', () => rowsOf(db).find((x) => !before.has(x.id)), 10_000);
      expect(opened.status).toBe('running');
      expect(runIdsIn(stateDir)).toEqual([]);
      proxy.setPlan([]);
      const recovered = await svcInProcess(['runs', 'recover'], { env });
      expect(recovered.code, recovered.stderr).toBe(0);
      expect(problemsAfter(stateDir, before)).toEqual([]);
      expect(
        rowsOf(db)
          .filter((x) => !before.has(x.id))
          .map((x) => [x.id, x.status, x.stop_reason]),
      ).toEqual([[opened.id, 'cancelled', 'interrupted']]);
      expect(runIdsIn(stateDir)).toEqual([opened.id]);
    } finally {
      await proxy.close();
    }
  }, 60_000);
});

describe('signals', () => {
  test.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)(
    '%s: agents stopped (process group gone), run closed interrupted/cancelled, exit %i',
    async (signal, code) => {
      const { stateDir, before, run, pid } = await startSignalRun(slowAgentCmd, '1s');
      // The agent leads its own process group.
      expect(() => process.kill(-pid, 0)).not.toThrow();
      run.child.kill(signal);
      const ended = await run.done;
      expect(ended.code, run.out().stderr).toBe(code);
      // When svc has exited, nothing of the agent's group still runs (a zombie the init process has
      // not reaped yet is already dead), and the group is soon gone altogether.
      expect(
        groupMembers(pid).filter((m) => m.split(' ')[1] !== 'Z'),
        "live processes of the agent's group",
      ).toEqual([]);
      await waitFor(
        "the agent's process group to be reaped",
        () => {
          try {
            process.kill(-pid, 0);
            return false;
          } catch {
            return true;
          }
        },
        5_000,
      );
      const [runId] = runIdsIn(stateDir);
      const row = rowsOf(db).find((x) => x.id === runId)!;
      expect(row).toMatchObject({ status: 'cancelled', stop_reason: 'interrupted' });
      expect(problemsAfter(stateDir, before)).toEqual([]);
      // The leg that was running is settled failed on the service; the one never started, not_reached.
      const legs = db.prepare('SELECT disposition FROM dispatch_cards WHERE run_id = ? ORDER BY position').all(runId!) as { disposition: string }[];
      expect(legs.map((l) => l.disposition)).toEqual(['failed', 'not_reached']);
      expect(run.out().stderr).not.toMatch(/^\s+at /m);
    },
    60_000,
  );

  test('a second SIGINT exits at once (130); svc runs recover then closes the run interrupted, in agreement with the journal', async () => {
    const { env, stateDir, before, run } = await startSignalRun(stubbornAgentCmd, '5s');
    run.child.kill('SIGINT');
    // Two signals sent back to back can merge into one: the second goes once svc has taken the first.
    await waitFor('svc to take the first SIGINT', () => run.out().stderr.includes('press Ctrl-C again'), 10_000);
    const second = Date.now();
    run.child.kill('SIGINT');
    const ended = await run.done;
    expect(ended.code, run.out().stderr).toBe(130);
    // "At once": well before the 5 s kill grace the first SIGINT started.
    expect(Date.now() - second).toBeLessThan(3_000);
    const recovered = await svcInProcess(['runs', 'recover'], { env });
    expect(recovered.code, recovered.stderr).toBe(0);
    expect(problemsAfter(stateDir, before)).toEqual([]);
    const [runId] = runIdsIn(stateDir);
    expect(rowsOf(db).find((x) => x.id === runId)).toMatchObject({ status: 'cancelled', stop_reason: 'interrupted' });
  }, 60_000);
});
