// The fence as a normal user (docs/trust.md), for real: the built `bin/svc.js` run by a uid that is
// not root (a pool uid, leased for the test so no leg of another run gets it), against the local
// service. bwrap works here, so the run is fenced by default: a namespace per program with only
// `lo`, bridged to svc's proxy. The test needs root only to become that user.
import { execFile } from 'node:child_process';
import { chmodSync, chownSync, linkSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { acquireAgentUser, type AgentLease } from '../../../src/dispatch/boundary/pool.js';
import { DEFAULT_POOL } from '../../../src/dispatch/boundary/user.js';
import { BIN, makeRepo, run } from '../../support/cli.js';
import { startTestService, type TestService } from '../../support/service.js';

const isRoot = process.getuid?.() === 0;

describe.runIf(isRoot)('svc as a normal user', () => {
  let svc: TestService;
  let lease: AgentLease;
  let allowed: Server;
  let denied: Server;
  let node: string;
  const portOf = (s: Server) => (s.address() as AddressInfo).port;
  beforeAll(async () => {
    svc = await startTestService();
    lease = await acquireAgentUser(DEFAULT_POOL);
    allowed = createServer((_q, r) => r.end('allowed-answer'));
    denied = createServer((_q, r) => r.end('denied-answer'));
    await new Promise<void>((ok) => allowed.listen(0, '127.0.0.2', ok));
    await new Promise<void>((ok) => denied.listen(0, '127.0.0.3', ok));
    // node lives under /root (0700) here: a link to it where the user can reach it.
    const dir = mkdtempSync(join(tmpdir(), 'svc-node-'));
    chmodSync(dir, 0o755);
    node = join(dir, 'node');
    linkSync(process.execPath, node);
  });
  afterAll(async () => {
    allowed.close();
    denied.close();
    await lease.release();
    rmSync(node, { force: true });
    await svc.close();
  });

  const owned = (dir: string) => (chownSync(dir, lease.user.uid, lease.user.gid), dir);
  const asUser = (args: string[], env: Record<string, string>, cwd: string) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((done) => {
      const child = execFile(node, [BIN, ...args], { uid: lease.user.uid, gid: lease.user.gid, env, cwd, timeout: 60_000 }, (error, stdout, stderr) =>
        done({ code: error ? ((error as { code?: number }).code ?? null) : 0, stdout, stderr }),
      );
      child.stdin?.end();
    });

  test('is fenced by default where bubblewrap works: the allowed host through the proxy, nothing else', async () => {
    const repo = await makeRepo();
    await run('chown', ['-R', `${lease.user.uid}:${lease.user.gid}`, repo]);
    const gate = owned(mkdtempSync(join(tmpdir(), 'svc-net-user-')));
    const out = join(gate, 'out.txt');
    const agent = join(gate, 'agent.sh');
    writeFileSync(
      agent,
      [
        `echo "allowed=$(curl -s --max-time 5 http://127.0.0.2:${portOf(allowed)}/)" >> ${out}`,
        `echo "deniedProxy=$(curl -s --max-time 5 http://127.0.0.3:${portOf(denied)}/)" >> ${out}`,
        `echo "deniedDirect=$(curl -s --max-time 5 --noproxy '*' http://127.0.0.3:${portOf(denied)}/)" >> ${out}`,
        `echo "service=$(curl -s --max-time 5 --noproxy '*' ${svc.url}/api/v1/whoami)" >> ${out}`,
        'git -c user.name=a -c user.email=a@example.invalid commit -q --allow-empty -m "$SVC_CARD_KEY: tried"',
        '',
      ].join('\n'),
      { mode: 0o755 },
    );
    chownSync(agent, lease.user.uid, lease.user.gid);
    const key = svc.admin.createWorkItem({ projectKey: svc.projectKey, kind: 'task', title: 'reaches out as a user', type: 'code' }).key;
    const home = owned(mkdtempSync(join(tmpdir(), 'svc-home-')));
    const env = {
      PATH: '/usr/local/bin:/usr/bin:/bin',
      HOME: home,
      SVC_BASE_URL: svc.url,
      SVC_TOKEN: svc.token,
      SVC_STATE_DIR: owned(mkdtempSync(join(tmpdir(), 'svc-state-'))),
      SVC_CONFIG_DIR: owned(mkdtempSync(join(tmpdir(), 'svc-cfg-'))),
      NO_COLOR: '1',
    };
    const r = await asUser(['run', key, '--repo', repo, '--agent-cmd', `sh ${agent}`, '--allow-host', '127.0.0.2', '--json'], env, repo);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('network: fenced (legs reach 127.0.0.2; a network namespace per program)');
    const a = readFileSync(out, 'utf8');
    expect(a).toContain('allowed=allowed-answer\n');
    expect(a).toContain('deniedDirect=\n');
    expect(a).toContain('service=\n');
    expect(a).toMatch(/deniedProxy=svc fence: 127\.0\.0\.3:\d+ is not reachable/);
    expect(JSON.parse(r.stdout).legs[0].network).toEqual({
      mode: 'fenced',
      refused: [{ host: '127.0.0.3', port: portOf(denied), how: 'proxy: not on the allowlist', count: 1 }],
    });
  });

  test('where bubblewrap cannot be had: fenced is refused in one line before any run opens, and the default is open, said so', async () => {
    const repo = await makeRepo();
    await run('chown', ['-R', `${lease.user.uid}:${lease.user.gid}`, repo]);
    // A PATH with git, sh and the rest of a leg's tools, but no bwrap.
    const bin = mkdtempSync(join(tmpdir(), 'svc-nobwrap-'));
    chmodSync(bin, 0o755);
    for (const tool of ['git', 'sh', 'curl', 'env', 'true']) symlinkSync(`/usr/bin/${tool}`, join(bin, tool));
    const env = {
      PATH: bin,
      HOME: owned(mkdtempSync(join(tmpdir(), 'svc-home-'))),
      SVC_BASE_URL: svc.url,
      SVC_TOKEN: svc.token,
      SVC_STATE_DIR: owned(mkdtempSync(join(tmpdir(), 'svc-state-'))),
      SVC_CONFIG_DIR: owned(mkdtempSync(join(tmpdir(), 'svc-cfg-'))),
      NO_COLOR: '1',
    };
    const runs = () => (svc.db.prepare('SELECT count(*) AS n FROM dispatch_runs').get() as { n: number }).n;
    const item = () => svc.admin.createWorkItem({ projectKey: svc.projectKey, kind: 'task', title: 'no bwrap', type: 'code' }).key;
    const before = runs();
    const refused = await asUser(['run', item(), '--repo', repo, '--agent-cmd', 'true', '--network', 'fenced'], env, repo);
    expect(refused.code).toBe(2);
    expect(refused.stderr.trim()).toBe('svc: --network: fenced cannot be had here (bubblewrap (bwrap) is not installed); use --network open');
    expect(runs()).toBe(before);
    const open = await asUser(
      ['run', item(), '--repo', repo, '--agent-cmd', 'git -c user.name=a -c user.email=a@example.invalid commit -q --allow-empty -m "{key}: x"', '--json'],
      env,
      repo,
    );
    expect(open.code, open.stderr).toBe(0);
    expect(open.stderr).toContain('network: open (the fence cannot be had here: bubblewrap (bwrap) is not installed)');
  });
});
