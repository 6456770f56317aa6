// A fleet (docs/fleets.md): separate `svc auto --per-run 1` processes, each with its own repository
// clone and state folder (separate machines), drain one local service. One worker is killed with
// SIGKILL in the middle of a leg (its whole process group, agent included: the machine is gone);
// `svc runs recover` on that machine returns its card, and the machine, started again, does it.
// Every card ends implemented exactly once across all runs: none twice, none lost. The machines
// share what a team's machines share, the service and one git origin: each pushes its work
// (`--push`) before the leg's disposition is sent, and selection skips a card whose svc/<KEY> on
// origin holds work, so no machine picks up another's finished card. No item's status is moved.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, isolatedEnv, makeRepo, run, runCli } from '../support/cli.js';
import { startTestService, type TestService } from '../support/service.js';

const CARDS = 12;
const WORKERS = 4;

let s: TestService;
let marks: string;
let origin: string;
beforeAll(async () => {
  s = await startTestService();
  marks = mkdtempSync(join(tmpdir(), 'svc-fleet-marks-'));
  origin = join(mkdtempSync(join(tmpdir(), 'svc-fleet-origin-')), 'origin.git');
  await run('git', ['clone', '-q', '--bare', await makeRepo(), origin]);
});
afterAll(async () => {
  await s.close();
});

/** An agent that marks where it started (worker and card), waits, then commits. */
const agent = (sleep: string) =>
  `sh -c 'touch "$FLEET_MARKS/$FLEET_WORKER.$SVC_CARD_KEY" && sleep ${sleep} && git -c user.name=a -c user.email=a@example.invalid commit -q --allow-empty -m "$SVC_CARD_KEY: done"'`;

interface Machine {
  name: string;
  env: NodeJS.ProcessEnv;
  repo: string;
}

async function machine(name: string): Promise<Machine> {
  const repo = join(mkdtempSync(join(tmpdir(), 'svc-fleet-machine-')), 'repo');
  await run('git', ['clone', '-q', origin, repo]);
  return { name, repo, env: isolatedEnv({ SVC_BASE_URL: s.url, SVC_TOKEN: s.token, SVC_PROJECT: s.projectKey, FLEET_MARKS: marks, FLEET_WORKER: name }) };
}

/** `svc auto` as its own process group, so a kill takes its agents with it. */
function worker(m: Machine, sleep: string): { child: ChildProcess; exit: Promise<number | null>; out: () => string } {
  let out = '';
  const child = spawn(
    process.execPath,
    [
      BIN,
      'auto',
      '--per-run',
      '1',
      '--push',
      '--agent-cmd',
      agent(sleep),
      '--agent-env',
      'FLEET_MARKS',
      '--agent-env',
      'FLEET_WORKER',
      '--repo',
      m.repo,
      '--on-failure',
      'continue',
    ],
    {
      env: m.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    },
  );
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exit = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  return { child, exit, out: () => out };
}

const startedBy = (name: string) =>
  readdirSync(marks)
    .filter((f) => f.startsWith(`${name}.`))
    .map((f) => f.slice(name.length + 1));

async function until<T>(what: () => T | undefined, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = what();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('a fleet of svc processes over one service', () => {
  it('drains the backlog with every card implemented exactly once, through a worker killed mid-leg', { timeout: 60_000 }, async () => {
    const keys = Array.from(
      { length: CARDS },
      (_, i) => s.admin.createWorkItem({ projectKey: s.projectKey, kind: 'task', title: `card ${i + 1}`, type: 'code' }).key,
    );
    const machines = await Promise.all(Array.from({ length: WORKERS }, (_, i) => machine(`w${i}`)));
    const [doomed, ...rest] = machines as [Machine, ...Machine[]];

    // The doomed machine starts first and is killed once its agent is running its first card.
    const victim = worker(doomed, '60');
    const lost = await until(() => startedBy(doomed.name)[0]);
    process.kill(-victim.child.pid!, 'SIGKILL');
    expect(await victim.exit).toBeNull();

    const fleet = rest.map((m) => worker(m, '0.2'));
    const codes = await Promise.all(fleet.map((w) => w.exit));
    expect(codes, fleet.map((w) => w.out()).join('\n---\n')).toEqual(rest.map(() => 0));
    // The lost card is still held by the dead machine's run (no heartbeat yet missed long enough).
    const held = s.db.prepare(`SELECT COUNT(*) AS n FROM dispatch_runs WHERE status = 'running'`).get() as { n: number };
    expect(held.n).toBe(1);

    // The machine comes back: recover closes its run and returns the card; its next auto does it.
    const recovered = await runCli(['runs', 'recover'], { env: doomed.env, cwd: doomed.repo });
    expect(recovered.code, recovered.stderr).toBe(0);
    const back = { ...doomed, name: `${doomed.name}-back`, env: { ...doomed.env, FLEET_WORKER: `${doomed.name}-back` } };
    const again = worker(back, '0.2');
    expect(await again.exit, again.out()).toBe(0);
    expect(startedBy(back.name)).toEqual([lost]);

    // Every card: one implemented leg across all runs, its item recorded.
    const runIds = (s.db.prepare('SELECT id FROM dispatch_runs').all() as { id: string }[]).map((r) => r.id);
    const implemented = new Map<string, number>();
    const trail: string[] = [];
    for (const id of runIds) {
      const r = await s.call('GET', `/dispatch-runs/${id}`);
      expect(r.body.status).not.toBe('running');
      const owner = machines.find((m) => existsSync(join(m.env.SVC_STATE_DIR!, 'runs', id)))?.name ?? '?';
      for (const c of r.body.cards as { workItemKey: string; disposition: string }[]) {
        trail.push(`${r.body.startedAt} ${owner} ${id} ${c.workItemKey} ${c.disposition} ${r.body.stopReason}`);
        if (c.disposition === 'implemented') implemented.set(c.workItemKey, (implemented.get(c.workItemKey) ?? 0) + 1);
      }
    }
    expect(
      Object.fromEntries(keys.map((k) => [k, implemented.get(k) ?? 0])),
      `${trail.sort().join('\n')}\n${[victim, ...fleet, again].map((w) => w.out()).join('\n---\n')}`,
    ).toEqual(Object.fromEntries(keys.map((k) => [k, 1])));
    // Each card's work is on origin, and no item's status was moved by a run.
    const pushed = (await run('git', ['for-each-ref', '--format=%(refname:lstrip=2)', 'refs/heads/svc/'], origin)).trim().split('\n').sort();
    expect(pushed).toEqual(keys.map((k) => `svc/${k}`).sort());
    for (const k of keys) expect((await s.call('GET', `/work-items/${k}`)).body.status).toBe('todo');
    // Work was shared: more than one machine implemented cards.
    const byMachine = [...machines, back].map((m) => startedBy(m.name).length);
    expect(byMachine.filter((n) => n > 0).length).toBeGreaterThan(1);
    expect(byMachine.reduce((a, b) => a + b, 0)).toBe(CARDS + 1);
  });
});
