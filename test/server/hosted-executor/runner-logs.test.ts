// Where runners' logs live: beside the service's database (`<db>.runners/`, 0700), shown by `svc
// runs show`, kept as long as the database keeps the run; with an in-memory database, in a temp
// folder that goes when the server stops. Either way `svc server` leaves no `svc-runners-*` in the
// temp folder. The server is a process of its own with a TMPDIR of the test's; its runners are Jobs
// of the recording Kubernetes API (fake-kube-api.ts), so no container engine is needed.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, isolatedEnv } from '../../support/cli.js';
import { svcInProcess } from '../../support/svc-in-process.js';
import { startFakeKubeApi, type FakeKubeApi } from './fake-kube-api.js';

let api: FakeKubeApi;
let root: string;
beforeAll(async () => {
  api = await startFakeKubeApi();
  root = mkdtempSync(join(tmpdir(), 'svc-runner-logs-'));
});
afterAll(async () => {
  await api?.close();
});

interface Server {
  url: string;
  token: string;
  tmp: string;
  stop(): Promise<void>;
}

async function serve(name: string, args: string[]): Promise<Server> {
  const tmp = join(root, name, 'tmp');
  mkdirSync(tmp, { recursive: true });
  const kubeconfig = api.kubeconfig(join(root, name), 'runners');
  const child: ChildProcess = spawn(
    process.execPath,
    [BIN, 'server', '--port', '0', '--seed', 'demo', '--hosted-executor', 'kubernetes', '--kubeconfig', kubeconfig, '--hosted-poll', '50ms', ...args],
    { env: isolatedEnv({ TMPDIR: tmp }), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const next = async () => {
    const r = await Promise.race([lines.next(), new Promise<never>((_, fail) => setTimeout(() => fail(new Error(`no start: ${stderr}`)), 15_000))]);
    if (r.done) throw new Error(`svc server exited: ${stderr}`);
    return r.value as string;
  };
  const url = await next();
  const token = await next();
  return {
    url,
    token,
    tmp,
    async stop() {
      const exited = new Promise((done) => child.once('exit', done));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Opens a hosted run, lets its Job end with `log`, and returns the run once the service closed it. */
async function hostedRun(s: Server, log: string): Promise<{ id: string; logs: string; shown: string }> {
  const personal = isolatedEnv({ SVC_BASE_URL: s.url, SVC_TOKEN: s.token, SVC_PROJECT: 'DEMO' });
  const made = await fetch(`${s.url}/api/v1/projects/DEMO/work-items`, {
    method: 'POST',
    headers: { authorization: `Bearer ${s.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ kind: 'task', type: 'code', title: 'Logs', targetRepositories: ['acme/widgets'] }),
  }).then((r) => r.json() as Promise<{ key: string }>);
  const opened = await svcInProcess(['run', made.key, '--hosted', '--json'], { env: personal });
  expect(opened.code, opened.stderr).toBe(0);
  const id = JSON.parse(opened.stdout).run.id as string;
  const name = await until('the Job', async () => {
    const job = api.requests.find((r) => r.method === 'POST' && r.path.endsWith('/jobs') && r.body.metadata.labels['svc-cli/run-id'] === id);
    return job && api.requests.some((r) => r.method === 'PATCH' && r.path.endsWith(`/jobs/${job.body.metadata.name}`))
      ? (job.body.metadata.name as string)
      : undefined;
  });
  api.finish(name, { succeeded: false, exitCode: 3, log });
  const run = await until('the run closed', async () => {
    const r = await fetch(`${s.url}/api/v1/dispatch-runs/${id}`, { headers: { authorization: `Bearer ${s.token}` } }).then((x) => x.json() as Promise<any>);
    return r.status !== 'running' && r.agentInstance?.endedAt ? r : undefined;
  });
  const shown = await svcInProcess(['runs', 'show', id], { env: personal });
  expect(shown.code, shown.stderr).toBe(0);
  return { id, logs: run.agentInstance.logs as string, shown: shown.stdout + shown.stderr };
}

const runnerFolders = (dir: string) => readdirSync(dir).filter((n) => n.startsWith('svc-runners-'));

describe("runners' logs", () => {
  it('live beside the database (0700), are shown by svc runs show, outlive the server; nothing in TMPDIR', async () => {
    const db = join(root, 'file', 'svc.db');
    const s = await serve('file', ['--db', db]);
    const run = await hostedRun(s, 'the runner said this\n');
    expect(run.logs).toBe(join(`${db}.runners`, `${run.id}.log`));
    expect(statSync(`${db}.runners`).mode & 0o777).toBe(0o700);
    expect(readFileSync(run.logs, 'utf8')).toBe('the runner said this\n');
    expect(run.shown).toContain(`logs ${run.logs}`);
    await s.stop();
    expect(runnerFolders(s.tmp)).toEqual([]);
    // The run's record is still in the database, and so is its log.
    expect(existsSync(run.logs)).toBe(true);
  });

  it('with an in-memory database: in a temp folder the server removes when it stops', async () => {
    const s = await serve('memory', []);
    const run = await hostedRun(s, 'gone with the server\n');
    expect(run.logs.startsWith(join(s.tmp, 'svc-runners-'))).toBe(true);
    expect(readFileSync(run.logs, 'utf8')).toBe('gone with the server\n');
    await s.stop();
    expect(runnerFolders(s.tmp)).toEqual([]);
  });
});
