// A listed name the leg's resolver answers, as root through the pool (docs/trust.md, "The network
// of a leg"): its public answer is opened for the uid, on the name's ports, before the answer
// reaches the program; an inside answer is not opened and not given. svc's own lookups are made to
// answer addresses of the documentation ranges (a test has no public name of its own to ask for);
// nothing connects to them.
import { execFile, execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, vi } from 'vitest';

vi.mock('node:dns/promises', async (real) => {
  const dns = await real<typeof import('node:dns/promises')>();
  const fake: Record<string, string> = { 'api.direct.test': '198.51.100.7', 'inside.direct.test': '10.0.0.7', 'web.direct.test': '198.51.100.8' };
  return {
    ...dns,
    lookup: (host: string, options: object) =>
      fake[host] ? Promise.resolve([{ address: fake[host], family: 4 }]) : (dns.lookup as (h: string, o: object) => Promise<unknown>)(host, options),
  };
});

// The suite's workers are shared by files (isolate: false): modules another file loaded with the
// real lookup are loaded again, so that the mock above is what they import.
vi.resetModules();
const { DEFAULT_POOL } = await import('../../../src/dispatch/boundary/user.js');
const { acquireAgentUser } = await import('../../../src/dispatch/boundary/pool.js');
const { fenceUp } = await import('../../../src/dispatch/fence/index.js');
const { lookupsReachResolver, readLookupFiles } = await import('../../../src/dispatch/fence/name-lookups.js');

const isRoot = process.getuid?.() === 0;

describe.runIf(isRoot)("a name the leg's resolver answers", () => {
  it('is opened for the uid on the name’s ports before the program has the answer; an inside answer is neither', async () => {
    const lease = await acquireAgentUser(DEFAULT_POOL);
    const uid = lease.user.uid;
    const refused: string[] = [];
    const fence = await fenceUp({ uid, mode: 'fenced', allow: ['api.direct.test:443', 'inside.direct.test'], onRefused: (r) => refused.push(r.how) });
    const set = (name: string) => execFileSync('nft', ['list', 'set', 'inet', `svc_${process.pid}`, `${name}_${uid}`], { encoding: 'utf8' });
    const resolve = (name: string) =>
      new Promise<string>((done) =>
        execFile('getent', ['ahostsv4', name], { uid, gid: lease.user.gid, cwd: '/', env: fence.env({ PATH: process.env.PATH ?? '' }) }, (_e, out) =>
          done(out),
        ),
      );
    try {
      expect(set('okp')).not.toContain('198.51.100.7');
      expect(await resolve('api.direct.test')).toContain('198.51.100.7');
      // In the kernel by the time the program read its answer, on the listed port only.
      expect(set('okp')).toMatch(/198\.51\.100\.7 \. 443 timeout 1m/);
      expect(set('oka')).not.toContain('198.51.100.7');
      expect(await resolve('inside.direct.test')).toBe('');
      expect(set('okp') + set('oka')).not.toContain('10.0.0.7');
      expect(refused).toContain('dns: resolves to 10.0.0.7, an inside address off the allowlist');
    } finally {
      await fence.down();
      await lease.release();
    }
  });

  // 198.51.100.8 is put on lo for the test: a public address that answers here, standing in for
  // the listed name's host on the internet.
  it('lets a proxy-aware program reach a listed name directly, by the answer its resolver gave', async () => {
    execFileSync('ip', ['addr', 'add', '198.51.100.8/32', 'dev', 'lo']);
    const server = createServer((_q, r) => r.end('by-name'));
    await new Promise<void>((ok) => server.listen(0, '198.51.100.8', ok));
    const port = (server.address() as AddressInfo).port;
    const lease = await acquireAgentUser(DEFAULT_POOL);
    const fence = await fenceUp({ uid: lease.user.uid, mode: 'fenced', allow: [`web.direct.test:${port}`, '*.suffix.test'], onRefused: () => {} });
    const env = fence.env({ PATH: process.env.PATH ?? '' });
    const curl = (url: string) =>
      new Promise<string>((done) =>
        execFile('curl', ['-s', '--max-time', '5', '-w', ' %{remote_ip}', url], { uid: lease.user.uid, gid: lease.user.gid, cwd: '/', env }, (_e, out) =>
          done(out),
        ),
      );
    try {
      if (lookupsReachResolver(readLookupFiles())) {
        expect(env.NO_PROXY).toBe('web.direct.test,.suffix.test');
        // Not the proxy's 127.0.0.1: curl looked the name up (the leg's resolver) and went straight there.
        expect(await curl(`http://web.direct.test:${port}/`)).toBe('by-name 198.51.100.8');
      } else {
        // Lookups that would miss the resolver here: names go through the proxy, which reaches it too.
        expect(env.NO_PROXY).toBe('');
        expect(await curl(`http://web.direct.test:${port}/`)).toBe('by-name 127.0.0.1');
      }
    } finally {
      await fence.down();
      await lease.release();
      server.close();
      execFileSync('ip', ['addr', 'del', '198.51.100.8/32', 'dev', 'lo']);
    }
  });

  // A container's engine DNATs DNS to its own resolver (Docker: 127.0.0.11 at priority -100, set up
  // before svc starts); here a NAT rule of another table, even a step earlier than that, sends the
  // uid's DNS elsewhere: the fence's redirect still comes first, so the leg asks its own resolver.
  it("reaches the leg's resolver past a container's own DNAT of DNS", async () => {
    const lease = await acquireAgentUser(DEFAULT_POOL);
    const uid = lease.user.uid;
    const table = `svc_test_dnat_${process.pid}`;
    execFileSync('nft', ['-f', '-'], {
      input: `table ip ${table} { chain out { type nat hook output priority -101; meta skuid ${uid} udp dport 53 dnat to 127.0.0.9:5353; }; }\n`,
    });
    const fence = await fenceUp({ uid, mode: 'fenced', allow: ['api.direct.test:443'], onRefused: () => {} });
    try {
      const out = await new Promise<string>((done) =>
        execFile('getent', ['ahostsv4', 'api.direct.test'], { uid, gid: lease.user.gid, cwd: '/', env: fence.env({ PATH: process.env.PATH ?? '' }) }, (_e, o) =>
          done(o),
        ),
      );
      expect(out).toContain('198.51.100.7');
    } finally {
      await fence.down();
      await lease.release();
      execFileSync('nft', ['delete', 'table', 'ip', table]);
    }
  });
});
