// svc runs list / runs cancel / logs in run order, and a failed run's summary, through the command
// line run in-process against the local service and a real git repository.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, isolatedEnv, makeRepo, runCli, type CliEnv } from '../../support/cli.js';
import { svcInProcess } from '../../support/svc-in-process.js';
import { startTestService, type TestService } from '../../support/service.js';

let svc: TestService;
let env: CliEnv;
let repo: string;
beforeAll(async () => {
  svc = await startTestService();
  repo = await makeRepo();
  env = isolatedEnv({ SVC_BASE_URL: svc.url, SVC_TOKEN: svc.token, SVC_PROJECT: svc.projectKey });
});
afterAll(async () => {
  await svc.close();
});

const item = (title: string) => svc.admin.createWorkItem({ projectKey: svc.projectKey, kind: 'task', title, type: 'research' }).key;
const cli = (args: string[]) => svcInProcess(args, { env, cwd: repo });
const ECHO = 'sh -c "echo working on $SVC_CARD_KEY"';

describe('a failed run', () => {
  let runId: string;
  let keys: string[];
  it('names svc logs RUN KEY and svc continue RUN, and lists the cards it never reached', async () => {
    keys = [item('fails'), item('never 1'), item('never 2')];
    const r = await cli(['run', ...keys, '--agent-cmd', 'sh -c "echo broken; exit 3"', '--heartbeat-interval', '5s']);
    expect(r.code).toBe(1);
    runId = /run (\S+) · run · halted · failed/.exec(r.stderr)![1]!;
    expect(r.stderr).toContain(`${keys[0]}: svc logs ${runId} ${keys[0]}`);
    expect(r.stderr).toContain(`run again what did not land: svc continue ${runId}`);
    for (const k of keys.slice(1)) expect(r.stderr).toMatch(new RegExp(`${k}\\s+not_reached\\s+run stopped halted before it`));
  });

  it('svc runs list shows it from local state, with --json', async () => {
    const r = await cli(['runs', 'list', '--json']);
    expect(r.code).toBe(0);
    const rows = JSON.parse(r.stdout) as Array<Record<string, unknown>>;
    expect(rows.find((x) => x.id === runId)).toMatchObject({
      command: 'run',
      status: 'failed',
      stopReason: 'halted',
      where: `local ${repo}`,
      live: false,
      cards: { total: 3, implemented: 0, failed: 1, skipped: 0 },
    });
    const table = await cli(['runs', 'list']);
    expect(table.stdout).toMatch(new RegExp(`${runId}\\s+run\\s+0/3 ok, 1 failed\\s+failed \\(halted\\)\\s+\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d\\s`));
  });
});

describe('svc logs RUN', () => {
  it('lists legs in run order, not alphabetical', async () => {
    const [a, b] = [item('A'), item('B')];
    const r = await cli(['run', b, a, '--agent-cmd', ECHO, '--allow-empty', '--heartbeat-interval', '5s']);
    expect(r.code).toBe(0);
    const runId = /run (\S+) · run · completed/.exec(r.stderr)![1]!;
    const logs = await cli(['logs', runId]);
    // The legs' headers are on stdout with the logs, so `svc logs RUN > file` keeps them apart.
    expect(logs.stdout).toBe(`── ${b} ──\nworking on ${b}\n── ${a} ──\nworking on ${a}\n`);
    expect((await cli(['logs', runId, '--no-headers'])).stdout).toBe(`working on ${b}\nworking on ${a}\n`);
    expect((await cli(['logs', runId, a])).stdout).toBe(`working on ${a}\n`);
  });

  it('a reader that goes away ends it quietly, exit 0 (svc logs RUN | head -1)', async () => {
    const k = item('loud');
    const r = await cli(['run', k, '--agent-cmd', 'sh -c "yes line | head -c 400000"', '--allow-empty', '--heartbeat-interval', '5s']);
    const runId = /run (\S+) · run · completed/.exec(r.stderr)![1]!;
    const piped = await new Promise<{ code: string; err: string }>((done) => {
      const child = spawn('bash', ['-c', `"${process.execPath}" "${BIN}" logs ${runId} | head -1 >/dev/null; echo "\${PIPESTATUS[0]}"`], { env, cwd: repo });
      let out = '';
      let err = '';
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (err += d));
      child.on('close', () => done({ code: out.trim(), err }));
    });
    expect(piped).toEqual({ code: '0', err: '' });
  });

  it('--follow prints what a live run’s legs write until the run ends', async () => {
    const k = item('slow');
    const gate = join(repo, `.gate-${k}`);
    const agent = `sh -c 'echo first; while [ ! -e ${gate} ]; do sleep 0.05; done; echo second'`;
    const running = cli(['run', k, '--agent-cmd', agent, '--allow-empty', '--heartbeat-interval', '5s']);
    const runs = join(env.SVC_STATE_DIR!, 'runs');
    let runId = '';
    for (let i = 0; i < 400 && !runId; i++) {
      await new Promise((r) => setTimeout(r, 25));
      runId = (existsSync(runs) ? readdirSync(runs) : []).find((d) => existsSync(join(runs, d, 'logs', `${k}.log`))) ?? '';
    }
    const follow = runCli(['logs', runId, k, '--follow'], { env, cwd: repo });
    await new Promise((r) => setTimeout(r, 600));
    writeFileSync(gate, '');
    expect((await running).code).toBe(0);
    const followed = await follow;
    expect([followed.code, followed.stdout]).toEqual([0, 'first\nsecond\n']);
  });
});

describe('svc runs cancel', () => {
  it('closes a --hosted run no runner picked up, and runs list says so', async () => {
    const k = item('hosted');
    const opened = await cli(['run', k, '--hosted', '--agent', 'claude']);
    expect(opened.code).toBe(0);
    const runId = opened.stdout.trim();
    const listed = JSON.parse((await cli(['runs', 'list', '--json'])).stdout) as Array<Record<string, unknown>>;
    expect(listed.find((x) => x.id === runId)).toMatchObject({ status: 'open', where: 'hosted' });
    const r = await cli(['runs', 'cancel', runId]);
    expect(r).toMatchObject({ code: 0 });
    expect(r.stderr).toContain(`Cancelled run ${runId} (interrupted, cancelled).`);
    const run = await svc.call('GET', `/dispatch-runs/${runId}`);
    expect(run.body).toMatchObject({ status: 'cancelled', stopReason: 'interrupted' });
    const after = JSON.parse((await cli(['runs', 'list', '--json'])).stdout) as Array<Record<string, unknown>>;
    expect(after.find((x) => x.id === runId)).toMatchObject({ status: 'cancelled', stopReason: 'interrupted' });
    // The card is free again: another run may take it.
    const again = await cli(['run', k, '--dry-run']);
    expect(again.code).toBe(0);
    // Cancelling twice says it is closed, and changes nothing.
    expect((await cli(['runs', 'cancel', runId])).stderr).toContain(`Run ${runId} is already closed (cancelled, interrupted).`);
  });

  it('refuses a run that is live on this machine, leaving it open', async () => {
    const opened = await svc.call('POST', '/dispatch-runs', { body: { projectKey: svc.projectKey, command: 'run', cards: [{ workItemKey: item('live') }] } });
    const runId = opened.body.run.id as string;
    // A live process stands in for the svc that runs it: it holds the run's lock. (Not this test
    // process: the in-process svc is this process, and a run it holds itself is not another's.)
    const holder = spawn('sleep', ['60'], { stdio: 'ignore' });
    try {
      const dir = join(env.SVC_STATE_DIR!, 'runs', runId);
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'lock'), JSON.stringify({ pid: holder.pid, start: null }));
      const r = await cli(['runs', 'cancel', runId]);
      expect(r.code).toBe(1);
      expect(r.stderr.trim()).toBe(`svc: run ${runId} is live on this machine; stop it with Ctrl-C in its terminal`);
      expect((await svc.call('GET', `/dispatch-runs/${runId}`)).body.status).toBe('running');
    } finally {
      holder.kill();
    }
  });

  it('an unknown run is 4, a bad id is 2', async () => {
    expect((await cli(['runs', 'cancel', 'run_nope'])).code).toBe(4);
    expect((await cli(['runs', 'cancel', '../x'])).code).toBe(2);
  });
});
