// Two `svc auto` processes over one queue: the same project with ~10 ready leaves, a
// slow-ish fake agent, two machines (own homes, own repositories), one `svc server`. No card may be
// run twice: neither by the runs' legs on the service nor by the agents' own records.
// Each test has a project of its own and its own two machines, so the tests run side by side: most
// of their time is agents sleeping and processes starting, not CPU.
import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createAdmin } from '../../src/server/admin.js';
import { openDatabase, type Database } from '../../src/server/db.js';
import { MODULES } from '../../src/server/modules.js';
import { isolatedEnv, makeRepo, runCli, type CliEnv } from '../support/cli.js';
import { startLocalServer, type LocalServer } from '../support/server-process.js';
import { byMode } from './support.js';

let server: LocalServer;
let db: Database;
let agentCmd: string;
let root: string;

beforeAll(async () => {
  server = await startLocalServer();
  db = openDatabase(server.db, MODULES);
  root = mkdtempSync(join(tmpdir(), 'svc-queue-'));
  const agent = join(root, 'agent.sh');
  // Each agent writes down which card it worked on, in which run, on which machine. Given a gate
  // file (TRUST_GATE), it first waits for it (30 s at most): the test opens it once the event it
  // orders the machines by has happened.
  writeFileSync(
    agent,
    `#!/bin/sh
echo "$SVC_CARD_KEY $SVC_RUN_ID $TRUST_MACHINE" >> "$TRUST_RECORDS"
if [ -n "$TRUST_GATE" ]; then i=0; while [ ! -e "$TRUST_GATE" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done; fi
sleep 0.3
echo "worked on $SVC_CARD_KEY"
`,
  );
  chmodSync(agent, 0o755);
  agentCmd = `sh ${agent}`;
});

afterAll(async () => {
  db?.close();
  const violations = await server?.stop();
  expect(violations ?? [], 'responses that break the contract document').toEqual([]);
});

function machine(name: string, project: string, records: string, extra: CliEnv = {}): CliEnv {
  return isolatedEnv({
    SVC_BASE_URL: server.url,
    SVC_TOKEN: server.token,
    SVC_PROJECT: project,
    SVC_HEARTBEAT_INTERVAL: '1s',
    TRUST_RECORDS: records,
    TRUST_MACHINE: name,
    ...extra,
  });
}

/** A project of its own with `n` ready leaves. */
function queue(key: string, n: number): string[] {
  const admin = createAdmin(db);
  const ws = (db.prepare("SELECT id FROM workspaces WHERE slug = 'acme'").get() as { id: string }).id;
  admin.createProject({ workspaceId: ws, key, name: `Queue ${key}` });
  return Array.from({ length: n }, (_, i) => admin.createWorkItem({ projectKey: key, kind: 'task', title: `leaf ${i + 1}`, type: 'chore' }).key);
}

interface Leg {
  run: string;
  key: string;
  disposition: string;
}

/** Legs the service recorded as given to an agent (started, whatever came of it). */
function legsOf(project: string): Leg[] {
  return db
    .prepare(`SELECT c.run_id AS run, c.work_item_key AS key, c.disposition FROM dispatch_cards c JOIN dispatch_runs r ON r.id = c.run_id
              JOIN projects p ON p.id = r.project_id WHERE p.key = ? AND c.disposition IN ('running', 'implemented', 'failed') ORDER BY c.run_id, c.position`)
    .all(project) as unknown as Leg[];
}

function duplicates(keys: string[]): string[] {
  const seen = new Set<string>();
  return [...new Set(keys.filter((k) => (seen.has(k) ? true : (seen.add(k), false))))];
}

interface Outcome {
  keys: string[];
  legs: Leg[];
  agentRecords: string[][];
  context: string;
}

/**
 * Runs two machines' `svc auto` over a fresh queue; B starts when `startB` resolves. A's agents
 * hold until B's run is open too, or B has ended finding nothing it may take: a run moves no
 * status, so a card whose run has closed is ready again (docs/dispatch.md) and only runs that overlap
 * share a queue. On a loaded machine B's start-up could otherwise outlast A's whole run, and B
 * would rightly run cards of a run already closed, which is not the case these tests are about.
 */
async function twoMachines(project: string, argsA: string[], startB: (a: Promise<unknown>) => Promise<void>, argsB: string[] = []): Promise<Outcome> {
  const keys = queue(project, 10);
  const records = join(root, `records-${project}.txt`);
  const gate = join(root, `gate-${project}`);
  const args = (repo: string) => [
    'auto',
    '--agent-cmd',
    agentCmd,
    '--agent-env',
    'TRUST_RECORDS',
    '--agent-env',
    'TRUST_MACHINE',
    '--agent-env',
    'TRUST_GATE',
    '--allow-empty',
    '--repo',
    repo,
    '--json',
  ];
  const [repoA, repoB] = await Promise.all([makeRepo(), makeRepo()]);
  const a = runCli([...args(repoA), ...argsA], { env: machine('A', project, records, { TRUST_GATE: gate }), timeoutMs: 120_000 });
  await startB(a);
  const b = runCli([...args(repoB), ...argsB], { env: machine('B', project, records), timeoutMs: 120_000 });
  void Promise.race([runsOpenIn(project, 2), b])
    .catch(() => undefined)
    .then(() => writeFileSync(gate, ''));
  const [ra, rb] = await Promise.all([a, b]);
  expect(ra.code, ra.stderr).toBe(0);
  expect(rb.code, rb.stderr).toBe(0);
  const agentRecords = existsSync(records)
    ? readFileSync(records, 'utf8')
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => l.split(' '))
    : [];
  const legs = legsOf(project);
  const by = (m: string) => agentRecords.filter((x) => x[2] === m).length;
  console.log(`queue ${project}: machine A ran ${by('A')}, machine B ran ${by('B')} card(s) in ${new Set(legs.map((l) => l.run)).size} run(s)`);
  const context = `legs: ${legs.map((l) => `${l.key}@${l.run}`).join(' ')}\nagents: ${agentRecords.map((x) => x.join('@')).join(' ')}\nA: ${ra.stderr.slice(-600)}\nB: ${rb.stderr.slice(-600)}`;
  return { keys, legs, agentRecords, context };
}

/** No card run twice (service legs and agents' records agree), and the queue drained. */
function expectEachCardOnce({ keys, legs, agentRecords, context }: Outcome): void {
  expect(duplicates(agentRecords.map((x) => x[0]!)), context).toEqual([]);
  expect(duplicates(legs.map((l) => l.key)), context).toEqual([]);
  expect(agentRecords.map((x) => x[0]).sort(), context).toEqual([...keys].sort());
  for (const [key, run] of agentRecords)
    expect(
      legs.some((l) => l.key === key && l.run === run),
      `${key}@${run}\n${context}`,
    ).toBe(true);
  expect(
    legs.every((l) => l.disposition === 'implemented'),
    context,
  ).toBe(true);
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Resolves once `n` runs of `project` are open on the service at once. */
async function runsOpenIn(project: string, n = 1): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const row = db
      .prepare("SELECT count(*) AS n FROM dispatch_runs r JOIN projects p ON p.id = r.project_id WHERE p.key = ? AND r.status = 'running'")
      .get(project) as { n: number };
    if (Number(row.n) >= n) return;
    await sleep(20);
  }
  throw new Error(`no ${n} run(s) open at once in ${project}`);
}

describe.concurrent('two svc auto over one queue never run the same card', () => {
  test.each(byMode([[0], [150]], [[0], [50], [150], [400], [900]]))(
    'second machine starts %i ms after the first',
    async (delayMs) => {
      expectEachCardOnce(await twoMachines(`Q${delayMs}`, [], () => sleep(delayMs)));
    },
    byMode(120_000, 240_000),
  );

  // Each machine takes at most 5: the second one's open meets the first one's run (409) and
  // reselects around its cards, so both work and the queue is shared.
  test.each(byMode([[0], [150]], [[0], [150], [400]]))(
    'both with --max 5, the second starting %i ms later: the work is split',
    async (delayMs) => {
      const outcome = await twoMachines(`S${delayMs}`, ['--max', '5'], () => sleep(delayMs), ['--max', '5']);
      expectEachCardOnce(outcome);
      const machines = new Set(outcome.agentRecords.map((x) => x[2]));
      expect([...machines].sort(), outcome.context).toEqual(['A', 'B']);
    },
    byMode(120_000, 240_000),
  );

  // A runs `auto --max 3` and opens its run over Q-1..3; B's `auto` gets the 409, reselects
  // without them and runs Q-4..10. A finishes first; its cards are still ready (a run moves no
  // status), yet B must not take them in a later round: a card a 409 showed in another machine's
  // run is that machine's for the rest of the invocation (B re-ran them until this was fixed).
  test("one machine with --max 3, the other without: the second one never re-runs the first one's cards", async () => {
    expectEachCardOnce(await twoMachines('QMAX', ['--max', '3'], () => runsOpenIn('QMAX')));
  }, 120_000);
});
