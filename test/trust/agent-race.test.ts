// The agent boundary against an agent that races it (docs/trust.md "Threat model"), as
// root with svc's default pool of agent users:
// - a process the first leg leaves behind (setsid) plants symlinks where it guesses the next leg's
//   folder will be, aiming root's writes at svc's own bin/svc.js, which is also the hosted run's git
//   credential helper; had root written and chowned through one, the agent would have replaced the
//   helper and got the run credential at svc's push. The test runs a copy of svc, never the tree's.
// - two legs at once (--parallel 2) try to read each other's prompt and write into each other's clone.
import { createHash } from 'node:crypto';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DispatchRun } from '../../src/contract/types.js';
import { repositoryPath } from '../../src/server/git/index.js';
import { isolatedEnv, runCli, type CliEnv } from '../support/cli.js';
import type { LocalServer } from '../support/server-process.js';
import { startBoundaryWorld, type BoundaryWorld } from './boundary-world.js';
import { svcInProcess } from '../support/svc-in-process.js';
import { git } from '../support/hosted.js';

const isRoot = process.getuid?.() === 0;
const ROOT = resolve(import.meta.dirname, '../..');

let world: BoundaryWorld;
let server: LocalServer;
let hidden: string;
let open: string;
let personal: CliEnv;

beforeAll(async () => {
  if (!isRoot) return;
  world = await startBoundaryWorld('svc-race', { 'racer-agent.sh': 'racer-agent.sh', 'neighbour-agent.sh': 'neighbour-agent.sh' });
  ({ server, hidden, open, personal } = world);
}, 60_000);

afterAll(async () => {
  const violations = await world?.stop();
  expect(violations ?? [], 'responses that break the contract document').toEqual([]);
});

const createItem = (title: string, extra: Record<string, unknown> = {}) => world.createItem(title, extra);

/** Whether `pid` still runs (a zombie waiting for its reaper has ended: it holds nothing). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

describe.skipIf(!isRoot)('the agent boundary against an agent that races it (as root, default pool)', () => {
  it("a process left behind by one leg cannot make root write, chown or run anything through the next leg's folder (hosted: the credential helper is the prize)", async () => {
    const k1 = await createItem('Race first', { targetRepositories: ['acme/widgets'] });
    const k2 = await createItem('Race second', { targetRepositories: ['acme/widgets'] });
    const opened = await svcInProcess(['run', k1, k2, '--hosted', '--json'], { env: personal });
    expect(opened.code, opened.stderr).toBe(0);
    const runId = (JSON.parse(opened.stdout) as { run: { id: string } }).run.id;
    const runToken = (await svcInProcess(['server', 'run-token', runId, '--db', server.db])).stdout.trim();

    // A copy of svc (root's, 0755/0644 as installed) whose bin/svc.js is the target.
    const pkg = join(open, 'pkg');
    for (const part of ['bin', 'dist', 'package.json']) cpSync(join(ROOT, part), join(pkg, part), { recursive: true });
    const victim = join(pkg, 'bin', 'svc.js');
    const before = sha256(victim);
    const rdv = join(open, 'rdv-race');
    mkdirSync(rdv);
    chmodSync(rdv, 0o777);
    const workspace = mkdtempSync(join(open, 'work-'));
    const env = isolatedEnv({ SVC_BASE_URL: server.url, SVC_RUN_ID: runId, SVC_RUN_TOKEN: runToken, SVC_AGENT_USER: undefined });
    const r = await runCli(['attach', '--agent-cmd', `bash ${join(open, 'racer-agent.sh')} {key} ${k2} ${victim} ${rdv}`, '--json'], {
      env,
      cwd: workspace,
      timeoutMs: 120_000,
      bin: victim,
    });

    // The survivor was there (it wrote its pid), and it is gone: killed when its leg ended.
    const survivor = Number(readFileSync(join(rdv, 'survivor.pid'), 'utf8'));
    expect(survivor).toBeGreaterThan(1);
    expect(alive(survivor), 'the setsid survivor of the first leg outlived it').toBe(false);
    // Root wrote nothing through a planted link: svc's helper is as it was, root's, and never ran as the trojan.
    expect(existsSync(join(rdv, 'planted')) ? readFileSync(join(rdv, 'planted'), 'utf8') : '').toBe('');
    expect(sha256(victim)).toBe(before);
    expect(statSync(victim).uid).toBe(0);
    expect(existsSync(join(rdv, 'stolen'))).toBe(false);
    // Both cards were done, pushed by svc; main is untouched.
    expect(r.code, r.stderr).toBe(0);
    const summary = JSON.parse(r.stdout) as { status: string; legs: Array<{ key: string; disposition: string }> };
    expect(summary.legs.map((l) => [l.key, l.disposition])).toEqual([
      [k1, 'implemented'],
      [k2, 'implemented'],
    ]);
    const bare = repositoryPath(join(hidden, 'git-root'), 'acme/widgets');
    expect(await git(bare, 'log', '-1', '--format=%s', 'main')).toBe('Initial commit');
    expect(await git(bare, 'log', '-1', '--format=%s', `svc/${k2}`)).toBe(`${k2}: done`);
    const record = (await (
      await fetch(`${server.url}/api/v1/dispatch-runs/${runId}`, { headers: { authorization: `Bearer ${server.token}` } })
    ).json()) as DispatchRun;
    expect(record).toMatchObject({ status: 'succeeded', stopReason: 'completed' });
  }, 180_000);

  it("legs at once run as different uids and cannot read or write each other's folders", async () => {
    const repo = mkdtempSync(join(open, 'repo-'));
    await git(repo, 'init', '-q', '-b', 'main');
    await git(repo, 'commit', '-q', '--allow-empty', '-m', 'init');
    const a = await createItem('Neighbour A');
    const b = await createItem('Neighbour B');
    const rdv = join(open, 'rdv-neighbours');
    mkdirSync(rdv);
    chmodSync(rdv, 0o777);
    const agent = `bash ${join(open, 'neighbour-agent.sh')} {key} ${a} ${b} ${rdv}`;
    const env = isolatedEnv({ SVC_BASE_URL: server.url, SVC_TOKEN: server.token, SVC_PROJECT: 'DEMO', SVC_AGENT_USER: undefined });
    const r = await runCli(['run', a, b, '--parallel', '2', '--agent-cmd', agent, '--repo', repo, '--json'], { env, timeoutMs: 120_000 });
    expect(r.code, r.stderr).toBe(0);
    const uids = [a, b].map((k) => Number(readFileSync(join(rdv, `uid-${k}`), 'utf8')));
    expect(uids.every((u) => u !== 0)).toBe(true);
    expect(uids[0]).not.toBe(uids[1]);
    for (const [me, other] of [
      [a, b],
      [b, a],
    ] as const) {
      const report = readFileSync(join(rdv, `report-${me}`), 'utf8');
      expect(report, me).not.toMatch(/GOT/);
      // Its branch holds its own file, and nothing of the other agent's.
      const files = (await git(repo, 'ls-tree', '-r', '--name-only', `svc/${me}`)).split('\n').filter(Boolean);
      expect(files, `svc/${me}`).toEqual([`${me}.txt`]);
      expect(files.some((f) => f.includes(other))).toBe(false);
    }
  }, 180_000);
});
