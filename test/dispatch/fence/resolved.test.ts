// A listed name the leg's resolver answers, as root through the pool (docs/trust.md, "The network
// of a leg"): its public answer is opened for the uid, on the name's ports, before the answer
// reaches the program; an inside answer is not opened and not given. svc's own lookups are made to
// answer addresses of the documentation ranges (a test has no public name of its own to ask for);
// nothing connects to them.
import { execFile, execFileSync } from 'node:child_process';
import { describe, expect, it, vi } from 'vitest';

vi.mock('node:dns/promises', async (real) => {
  const dns = await real<typeof import('node:dns/promises')>();
  const fake: Record<string, string> = { 'api.direct.test': '198.51.100.7', 'inside.direct.test': '10.0.0.7' };
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
});
