// The fence's tables (src/dispatch/fence/nft.ts), as root: a crashed svc's table is removed by the
// next svc or `svc runs recover`; a live one's stays. And a run's network as the commands decide it.
import { execFileSync } from 'node:child_process';
import { describe, expect, it, vi } from 'vitest';
import { networkFor } from '../../../src/commands/dispatch/network-options.js';
import { DEFAULT_POOL } from '../../../src/dispatch/boundary/user.js';
import { removeStaleTables } from '../../../src/dispatch/fence/nft.js';
import { processStart } from '../../../src/dispatch/state/run-lock.js';
import { makeRepo } from '../../support/cli.js';
import { exitCodeOf } from '../../../src/commands/exit-codes.js';
import { testContext } from '../../support/context.js';

const isRoot = process.getuid?.() === 0;
const tables = () => execFileSync('nft', ['list', 'tables'], { encoding: 'utf8' });
const make = (pid: number, start: string) =>
  execFileSync('nft', ['-f', '-'], { input: `table inet svc_${pid} {\n comment "svc pid ${pid} start ${start}"\n}\n` });

describe.runIf(isRoot)('a crashed svc leaves no fence behind', () => {
  it("a run through the pool removes a crashed svc's table before it opens, even an open run", async () => {
    make(4194301, '1');
    const net = await networkFor({ network: 'open' }, testContext(), {
      agent: { agent: 'claude' },
      workflow: null,
      repo: await makeRepo(),
      pool: DEFAULT_POOL,
    });
    expect(net.network.mode).toBe('open');
    expect(tables()).not.toContain('inet svc_4194301');
  });

  it('removes the table of a gone process (or a reused pid), and keeps a live one', async () => {
    const live = process.ppid;
    make(live, processStart(live) ?? '-');
    make(4194300, '1');
    make(1, 'not-its-start');
    const removed = await removeStaleTables();
    expect(removed).toEqual(expect.arrayContaining(['svc_4194300', 'svc_1']));
    expect(tables()).toContain(`inet svc_${live}`);
    expect(tables()).not.toContain('inet svc_4194300');
    execFileSync('nft', ['delete', 'table', 'inet', `svc_${live}`]);
  });

  it('is not thrown off by a table its svc removes while the sweep looks at it (svc processes side by side)', async () => {
    // Tables of live svc processes that end while the sweep lists them one by one: the sweep
    // (any svc's first fenced leg) must carry on, not fail that leg's run.
    const live = process.ppid;
    const start = processStart(live) ?? '-';
    const names = Array.from({ length: 120 }, (_, i) => `svc_${4000000 + i}`);
    execFileSync('nft', ['-f', '-'], {
      input: names.map((n) => `table inet ${n} {\n comment "svc pid ${live} start ${start}"\n}\n`).join(''),
    });
    const sweep = removeStaleTables();
    await new Promise((r) => setTimeout(r, 15));
    execFileSync('nft', ['-f', '-'], { input: names.map((n) => `delete table inet ${n}\n`).join('') });
    await expect(sweep).resolves.toBeInstanceOf(Array);
    expect(tables()).not.toMatch(/svc_40000\d\d/);
  });
});

describe('the network of a run', () => {
  const agent = { agent: 'claude' };
  it('is fenced by default through the pool, with the preset host, the git host and --allow-host', async () => {
    const repo = await makeRepo();
    execFileSync('git', ['-C', repo, 'remote', 'add', 'origin', 'https://git.example.com/team/app.git']);
    const ctx = testContext();
    const net = await networkFor({ allowHost: ['127.0.0.2', '*.allowed.test:8443'] }, ctx, {
      agent,
      workflow: null,
      repo,
      pool: DEFAULT_POOL,
      nft: async () => null,
    });
    expect(net.network).toEqual({
      mode: 'fenced',
      allow: ['api.anthropic.com', 'statsig.anthropic.com', '127.0.0.2', '*.allowed.test:8443', 'git.example.com:443'],
    });
    expect(net.line).toBe(
      'network: fenced (legs reach api.anthropic.com, statsig.anthropic.com, 127.0.0.2, *.allowed.test:8443, git.example.com:443; nftables rules per agent uid)',
    );
  });

  it.each([
    [{ network: 'fenced' as const }, {}, DEFAULT_POOL, 'nft refused', /^--network: fenced needs nftables rules, which this machine refused \(nft refused\)/],
    [{}, { SVC_NETWORK: 'walled' }, DEFAULT_POOL, null, /^SVC_NETWORK: expected open, fenced or none, got 'walled'$/],
    [{ network: 'none' as const }, {}, null, null, /^--network: none cannot be had here \(bubblewrap \(bwrap\) is not installed\); use --network open$/],
    [{ allowHost: ['host\0.test'] }, {}, DEFAULT_POOL, null, /^--allow-host: not a host to allow/],
  ])('refuses %j %j in one line, exit 2, before any run opens', async (flags, env, pool, nftWhy, message) => {
    const repo = await makeRepo();
    const ctx = testContext({ env });
    const bwrap = async () => 'bubblewrap (bwrap) is not installed';
    const error = await networkFor(flags, ctx, { agent, workflow: null, repo, pool, nft: async () => nftWhy, bwrap, uid: 1000 }).catch((e: Error) => e);
    expect((error as Error).message).toMatch(message);
    expect(exitCodeOf({ error })).toBe(2);
  });

  it.each([
    [
      1000,
      null,
      { mode: 'fenced', allow: ['api.anthropic.com', 'statsig.anthropic.com'] },
      'network: fenced (legs reach api.anthropic.com, statsig.anthropic.com; a network namespace per program)',
    ],
    [1000, 'bwrap is not installed', { mode: 'open', allow: [] }, 'network: open (the fence cannot be had here: bwrap is not installed)'],
    [0, null, { mode: 'open', allow: [] }, "network: open (agents run as svc's own user; --network fenced to fence them)"],
  ])('as uid %s without an agent user (bwrap: %s): %j, and says so', async (uid, why, network, line) => {
    const net = await networkFor({}, testContext(), { agent, workflow: null, repo: await makeRepo(), pool: null, uid, bwrap: async () => why });
    expect(net).toEqual({ network, line });
  });
});

describe.runIf(isRoot)("a leg's own ports", () => {
  it('are reached through the proxy and directly; a port of another leg is not', async () => {
    const { createServer } = await import('node:http');
    const { acquireAgentUser } = await import('../../../src/dispatch/boundary/pool.js');
    const { fenceUp } = await import('../../../src/dispatch/fence/index.js');
    const { execFile } = await import('node:child_process');
    const serve = async (text: string) => {
      const s = createServer((_q, r) => r.end(text));
      await new Promise<void>((ok) => s.listen(0, '127.0.0.1', ok));
      return { s, port: (s.address() as { port: number }).port };
    };
    const own = await serve('own-server');
    const other = await serve('other-legs-server');
    const lease = await acquireAgentUser(DEFAULT_POOL);
    const refused: string[] = [];
    const fence = await fenceUp({
      uid: lease.user.uid,
      mode: 'fenced',
      allow: [],
      ownPorts: { first: own.port, count: 1 },
      onRefused: (r) => refused.push(`${r.host}:${r.port}`),
    });
    const curl = (args: string[]) =>
      new Promise<string>((done) =>
        execFile(
          'curl',
          ['-s', '--max-time', '5', ...args],
          { uid: lease.user.uid, gid: lease.user.gid, cwd: '/', env: fence.env({ PATH: process.env.PATH ?? '' }) },
          (_e, out) => done(out),
        ),
      );
    try {
      expect(await curl([`http://127.0.0.1:${own.port}/`])).toBe('own-server');
      expect(await curl(['--noproxy', '*', `http://127.0.0.1:${own.port}/`])).toBe('own-server');
      expect(await curl([`http://127.0.0.1:${other.port}/`])).toContain('svc fence');
      expect(await curl(['--noproxy', '*', `http://127.0.0.1:${other.port}/`])).toBe('');
    } finally {
      await fence.down();
      await lease.release();
      own.s.close();
      other.s.close();
    }
    expect(refused).toEqual([`127.0.0.1:${other.port}`, `127.0.0.1:${other.port}`]);
  });
});

describe.runIf(isRoot)('what the resolver opens for a leg', () => {
  it('is reached directly on its port while it is open, and closes when its time is up', async () => {
    const { createServer } = await import('node:http');
    const { acquireAgentUser } = await import('../../../src/dispatch/boundary/pool.js');
    const { legRulesUp } = await import('../../../src/dispatch/fence/leg-rules.js');
    const { execFile } = await import('node:child_process');
    const serve = async (text: string) => {
      const s = createServer((_q, r) => r.end(text));
      await new Promise<void>((ok) => s.listen(0, '127.0.0.5', ok));
      return { s, port: (s.address() as { port: number }).port };
    };
    const answer = await serve('an-answer');
    const other = await serve('another-port');
    const lease = await acquireAgentUser(DEFAULT_POOL);
    const rules = await legRulesUp(lease.user.uid, { mode: 'fenced' });
    const curl = (port: number) =>
      new Promise<string>((done) =>
        execFile(
          'curl',
          ['-s', '--max-time', '5', '--noproxy', '*', `http://127.0.0.5:${port}/`],
          { uid: lease.user.uid, gid: lease.user.gid, cwd: '/', env: { PATH: process.env.PATH ?? '' } },
          (_e, out) => done(out),
        ),
      );
    try {
      expect(await curl(answer.port)).toBe('');
      await rules.open([{ address: '127.0.0.5', port: answer.port }], 2);
      expect(await curl(answer.port)).toBe('an-answer');
      expect(await curl(other.port)).toBe('');
      // Opened again: from now, not a second element beside the first.
      await rules.open([{ address: '127.0.0.5', port: answer.port }], 1);
      await new Promise((r) => setTimeout(r, 1_300));
      expect(await curl(answer.port)).toBe('');
    } finally {
      const refused = await rules.down();
      await lease.release();
      answer.s.close();
      other.s.close();
      expect(refused.map((r) => r.port).sort()).toEqual([answer.port, other.port].sort());
    }
  });
});

describe.runIf(isRoot)("a uid's next leg", () => {
  it('finds nothing of the last one: neither what it could reach nor what it was refused', async () => {
    const { createServer } = await import('node:http');
    const { acquireAgentUser } = await import('../../../src/dispatch/boundary/pool.js');
    const { legRulesUp } = await import('../../../src/dispatch/fence/leg-rules.js');
    const { execFile } = await import('node:child_process');
    const s = createServer((_q, r) => r.end('listed-for-the-first'));
    await new Promise<void>((ok) => s.listen(0, '127.0.0.5', ok));
    const port = (s.address() as { port: number }).port;
    const answered = createServer((_q, r) => r.end('opened-for-the-first'));
    await new Promise<void>((ok) => answered.listen(0, '127.0.0.6', ok));
    const answeredPort = (answered.address() as { port: number }).port;
    const lease = await acquireAgentUser(DEFAULT_POOL);
    const curl = (to: string) =>
      new Promise<string>((done) =>
        execFile(
          'curl',
          ['-s', '--max-time', '5', '--noproxy', '*', to],
          { uid: lease.user.uid, gid: lease.user.gid, cwd: '/', env: { PATH: process.env.PATH ?? '' } },
          (_e, out) => done(out),
        ),
      );
    try {
      const first = await legRulesUp(lease.user.uid, { mode: 'fenced', direct: [{ address: '127.0.0.5', port: null }] });
      await first.open([{ address: '127.0.0.6', port: answeredPort }], 60);
      expect(await curl(`http://127.0.0.5:${port}/`)).toBe('listed-for-the-first');
      expect(await curl(`http://127.0.0.6:${answeredPort}/`)).toBe('opened-for-the-first');
      expect(await curl('http://127.0.0.3:9/')).toBe('');
      expect((await first.down()).map((r) => `${r.host}:${r.port}`)).toEqual(['127.0.0.3:9']);
      const next = await legRulesUp(lease.user.uid, { mode: 'fenced' });
      expect(await curl(`http://127.0.0.5:${port}/`)).toBe('');
      expect(await curl(`http://127.0.0.6:${answeredPort}/`)).toBe('');
      expect((await next.down()).map((r) => `${r.host}:${r.port}`).sort()).toEqual([`127.0.0.5:${port}`, `127.0.0.6:${answeredPort}`].sort());
      // And a leg with no network at all after one that had some: nothing answers.
      const none = await legRulesUp(lease.user.uid, { mode: 'none' });
      expect(await curl(`http://127.0.0.5:${port}/`)).toBe('');
      expect((await none.down()).map((r) => `${r.host}:${r.port}`)).toEqual([`127.0.0.5:${port}`]);
    } finally {
      await lease.release();
      s.close();
      answered.close();
    }
  });
});

describe.runIf(isRoot)("svc's nft session", () => {
  it("says nft's error in one line, and answers the next call as before", async () => {
    const { nftSession, ourTable } = await import('../../../src/dispatch/fence/nft.js');
    const t = await ourTable();
    const failed = await nftSession()
      .run([`add element inet ${t} no_such_set { 1.2.3.4 }`])
      .catch((e: Error) => e);
    expect(failed).toBeInstanceOf(Error);
    expect((failed as Error).message).toMatch(/^nft: Error: .*No such file or directory.*\(add element inet svc_\d+ no_such_set/);
    expect((failed as Error).message).not.toContain('\n');
    expect(await nftSession().run([`list map inet ${t} legs`])).toMatch(/map legs \{/);
  });
});

describe.runIf(isRoot)('the fence loaded again in the same process (a test runner reusing its workers)', () => {
  it('shares the process’s table and what is in it; with that lost, it finds the uid’s chains and sets and empties them', async () => {
    const { createServer } = await import('node:http');
    const { acquireAgentUser } = await import('../../../src/dispatch/boundary/pool.js');
    const { execFile } = await import('node:child_process');
    const s = createServer((_q, r) => r.end('listed-for-the-first'));
    await new Promise<void>((ok) => s.listen(0, '127.0.0.5', ok));
    const port = (s.address() as { port: number }).port;
    const lease = await acquireAgentUser(DEFAULT_POOL);
    const uid = lease.user.uid;
    const curl = () =>
      new Promise<string>((done) =>
        execFile(
          'curl',
          ['-s', '--max-time', '5', '--noproxy', '*', `http://127.0.0.5:${port}/`],
          { uid, gid: lease.user.gid, cwd: '/', env: { PATH: process.env.PATH ?? '' } },
          (_e, out) => done(out),
        ),
      );
    const table = `svc_${process.pid}`;
    const rules = (chain: string) => execFileSync('nft', ['list', 'chain', 'inet', table, `${chain}_${uid}`], { encoding: 'utf8' });
    const listed = { mode: 'fenced' as const, dnsPort: 9, direct: [{ address: '127.0.0.5', port: null }] };
    try {
      const first = await import('../../../src/dispatch/fence/leg-rules.js');
      const firstNft = await import('../../../src/dispatch/fence/nft.js');
      await (await first.legRulesUp(uid, listed)).down();
      vi.resetModules();
      const again = await import('../../../src/dispatch/fence/leg-rules.js');
      const againNft = await import('../../../src/dispatch/fence/nft.js');
      expect(again).not.toBe(first);
      expect(againNft.processFence).toBe(firstNft.processFence);
      const next = await again.legRulesUp(uid, { mode: 'fenced' });
      expect(await curl()).toBe('');
      await next.down();
      // Where that is lost (another isolate of the same process), the uid's objects are emptied as they are made.
      await (await again.legRulesUp(uid, listed)).down();
      againNft.processFence.made.clear();
      const lost = await again.legRulesUp(uid, { mode: 'fenced' });
      expect(await curl()).toBe('');
      expect(rules('leg').match(/ct state established,related accept/g)).toHaveLength(1);
      expect(rules('dns')).not.toContain('redirect');
      await lost.down();
    } finally {
      await lease.release();
      s.close();
    }
  });
});
