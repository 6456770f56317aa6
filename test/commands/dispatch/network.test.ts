// `--network` and `--allow-host` from the command line (README.md#configuration, docs/trust.md): as root a run is fenced
// by default and says so in one line; --json carries each leg's refusals; a fence that cannot be
// had, or a bad value, is one line and exit 2 before any run opens.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { makeRepo } from '../../support/cli.js';
import { programEnv, runProgram } from '../../support/program.js';
import { startTestService, type TestService } from '../../support/service.js';

const isRoot = process.getuid?.() === 0;
let svc: TestService;
let allowed: Server;
let denied: Server;
const portOf = (s: Server) => (s.address() as AddressInfo).port;
beforeAll(async () => {
  svc = await startTestService();
  allowed = createServer((_q, r) => r.end('allowed-answer'));
  denied = createServer((_q, r) => r.end('denied-answer'));
  await new Promise<void>((ok) => allowed.listen(0, '127.0.0.2', ok));
  await new Promise<void>((ok) => denied.listen(0, '127.0.0.3', ok));
});
afterAll(async () => {
  allowed.close();
  denied.close();
  await svc.close();
});

const env = (over: Record<string, string | undefined> = {}) => programEnv(svc, over);
const runsOpened = () => (svc.db.prepare('SELECT count(*) AS n FROM dispatch_runs').get() as { n: number }).n;
const item = () => svc.admin.createWorkItem({ projectKey: svc.projectKey, kind: 'task', title: 'reaches out', type: 'code' }).key;

function agent(): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-net-agent-'));
  chmodSync(dir, 0o755);
  const file = join(dir, 'agent.sh');
  writeFileSync(
    file,
    [
      `echo "allowed: $(curl -s --max-time 5 http://127.0.0.2:${portOf(allowed)}/)"`,
      `echo "denied: $(curl -s --max-time 5 --noproxy '*' http://127.0.0.3:${portOf(denied)}/)"`,
      'git -c user.name=a -c user.email=a@example.invalid commit -q --allow-empty -m "$SVC_CARD_KEY: tried"',
      '',
    ].join('\n'),
    { mode: 0o755 },
  );
  return `sh ${file}`;
}

describe.runIf(isRoot)('as root', () => {
  test('a run is fenced by default, says so once, and --json lists what was refused', async () => {
    const repo = await makeRepo();
    const key = item();
    const r = await runProgram(['run', key, '--repo', repo, '--agent-cmd', agent(), '--allow-host', '127.0.0.2', '--json'], {
      env: env({ SVC_AGENT_USER: undefined }),
    });
    expect(r.code, r.stderr).toBe(0);
    const said = r.stderr.split('\n').filter((l) => l.includes('network: '));
    expect(said.map((l) => l.replace(/^\S+Z /, ''))).toEqual(['network: fenced (legs reach 127.0.0.2; nftables rules per agent uid)']);
    const leg = JSON.parse(r.stdout).legs[0];
    expect(leg.network).toEqual({
      mode: 'fenced',
      refused: [{ host: '127.0.0.3', port: portOf(denied), how: 'kernel: tcp, not through the proxy', count: 1 }],
    });
  });

  test('--network open is what it was: the leg reaches anything', async () => {
    const repo = await makeRepo();
    const r = await runProgram(['run', item(), '--repo', repo, '--agent-cmd', agent(), '--network', 'open', '--json'], {
      env: env({ SVC_AGENT_USER: undefined }),
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('network: open (--network; legs reach any host)');
    expect(JSON.parse(r.stdout).legs[0].network).toBeUndefined();
  });
});

describe.runIf(isRoot)('stored', () => {
  test('svc config set network takes open, fenced or none, and a run uses it under SVC_NETWORK and --network', async () => {
    const e = env({ SVC_AGENT_USER: undefined, SVC_CONFIG_DIR: mkdtempSync(join(tmpdir(), 'svc-cfg-')) });
    const bad = await runProgram(['config', 'set', 'network', 'walled'], { env: e });
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim()).toMatch(/^svc: .*expected open, fenced or none, got 'walled'$/);
    expect((await runProgram(['config', 'set', 'network', 'open'], { env: e })).code).toBe(0);
    const repo = await makeRepo();
    const stored = await runProgram(['run', item(), '--repo', repo, '--agent-cmd', agent(), '--json'], { env: e });
    expect(stored.stderr).toContain('network: open (network (stored); legs reach any host)');
    const overEnv = await runProgram(['run', item(), '--repo', repo, '--agent-cmd', agent(), '--json'], { env: { ...e, SVC_NETWORK: 'none' } });
    expect(overEnv.stderr).toContain('network: none (legs reach no host; nftables rules per agent uid)');
    expect(JSON.parse(overEnv.stdout).legs[0].network.mode).toBe('none');
  });
});

describe.runIf(isRoot)('svc runs recover', () => {
  test("removes a crashed svc's network fence and says so", async () => {
    execFileSync('nft', ['-f', '-'], { input: 'table inet svc_4194302 {\n comment "svc pid 4194302 start 1"\n}\n' });
    const r = await runProgram(['runs', 'recover'], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('removed the network fence inet svc_4194302 (its svc is gone)');
    expect(execFileSync('nft', ['list', 'tables'], { encoding: 'utf8' })).not.toContain('svc_4194302');
  });
});

describe('a network that cannot be had', () => {
  test.each([
    [['--network', 'walled'], {}, /argument 'walled' is invalid/],
    [['--allow-host', 'http://a.test/'], { SVC_AGENT_USER: 'none' }, /--allow-host: not a host to allow: "http:\/\/a.test\/"/],
    [[], { SVC_NETWORK: 'walled' }, /SVC_NETWORK: expected open, fenced or none, got 'walled'/],
  ])('%j %j: one line, exit 2, no run opened', async (args, over, message) => {
    const repo = await makeRepo();
    const before = runsOpened();
    const r = await runProgram(['run', item(), '--repo', repo, '--agent-cmd', 'true', ...args], { env: env(over) });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(runsOpened()).toBe(before);
  });
});
