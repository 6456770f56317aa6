// Which user an agent runs as (--agent-user, SVC_AGENT_USER, stored agentUser; docs/trust.md), and
// svc's private folders. The table uses an injected user lookup; one case asks the real system.
import { mkdirSync, mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AgentUserError, DEFAULT_POOL, lookupUser, resolveAgentUser, RUNNER_AGENT_UIDS } from '../../../src/dispatch/boundary/user.js';
import { ensurePrivateDir } from '../../../src/dispatch/state/private-dir.js';
import { isolatedEnv, makeRepo } from '../../support/cli.js';
import { startLocalServer } from '../../support/server-process.js';
import { svcInProcess } from '../../support/svc-in-process.js';

const users: Record<string, { uid: number; gid: number }> = {
  'svc-agent': { uid: 990, gid: 990 },
  nobody: { uid: 65534, gid: 65534 },
  root: { uid: 0, gid: 0 },
  dev: { uid: 1000, gid: 1000 },
};
const lookup = (known: string[]) => async (name: string) => (known.includes(name) ? users[name]! : null);
const all = Object.keys(users);

describe('resolveAgentUser', () => {
  const pool = (user: { name: string; uid: number; gid: number }) => ({ kind: 'user', user });
  it.each([
    ['root, nothing asked: the default pool svc-agent-N', undefined, 0, all, DEFAULT_POOL],
    ["not root, nothing asked: svc's own user", undefined, 1000, all, null],
    ['root asks a named user: a pool of one', 'dev', 0, all, pool({ name: 'dev', uid: 1000, gid: 1000 })],
    ['root asks a numeric uid without a passwd entry', '4242', 0, [], pool({ name: '4242', uid: 4242, gid: 4242 })],
    ['root asks uid:gid', '4242:100', 0, [], pool({ name: '4242:100', uid: 4242, gid: 100 })],
    ['root asks a uid range', '40000-40015', 0, [], { kind: 'range', first: 40000, last: 40015 }],
    ['a non-root svc names itself: no switch', 'dev', 1000, all, null],
  ] as const)('%s', async (_name, asked, uid, known, expected) => {
    const choice = await resolveAgentUser({ asked, source: '--agent-user', uid, lookup: lookup([...known]) });
    expect(choice.pool).toEqual(expected);
    expect(choice.warning).toBeNull();
  });

  it("none keeps svc's user: a warning as root, silence otherwise", async () => {
    const asRoot = await resolveAgentUser({ asked: 'none', source: 'SVC_AGENT_USER', uid: 0, lookup: lookup(all) });
    expect(asRoot).toEqual({ pool: null, warning: expect.stringMatching(/^SVC_AGENT_USER none: agents run as root/) });
    expect(await resolveAgentUser({ asked: 'none', source: '--agent-user', uid: 1000, lookup: lookup(all) })).toEqual({ pool: null, warning: null });
  });

  it.each([
    ['an unknown user', 'ghost', 0, all, /--agent-user: no user 'ghost'/],
    ['root as the agent user', 'root', 0, all, /is root, which is no boundary/],
    ['uid 0 by number', '0', 0, [], /is root, which is no boundary/],
    ['nobody, whose processes other services share', 'nobody', 0, all, /'nobody' is shared by system services/],
    ['a range across nobody', '65000-65535', 0, [], /includes 65534/],
    ['a range starting at root', '0-10', 0, [], /no range of unprivileged uids/],
    ['a backwards range', '50-40', 0, [], /no range of unprivileged uids/],
    ['a range without root', '40000-40001', 1000, [], /needs svc to run as root/],
    ['another user without root', 'dev', 1001, all, /needs svc to run as root/],
    ['a value of no known shape', 'a b', 0, all, /expected a user, UID\[:GID\], a range FIRST-LAST or none/],
  ] as const)('refuses %s', async (_name, asked, uid, known, message) => {
    await expect(resolveAgentUser({ asked, source: '--agent-user', uid, lookup: lookup([...known]) })).rejects.toThrow(AgentUserError);
    await expect(resolveAgentUser({ asked, source: '--agent-user', uid, lookup: lookup([...known]) })).rejects.toThrow(message);
  });

  it.each([
    ['a range over all of it', '65520-65533'],
    ['a range reaching into it', '60000-65520'],
    ['a range starting at its end', '65533-65533'],
    ['a uid in it', '65525'],
    ['a uid:gid in it', '65530:100'],
  ])("outside a runner, refuses %s: the runners' agents own those uids", async (_name, asked) => {
    const req = { asked, source: '--agent-user', uid: 0, lookup: lookup([]) };
    await expect(resolveAgentUser(req)).rejects.toThrow("--agent-user: '" + asked + "' overlaps uids 65520-65533, which hosted runners' agents use");
    // Inside a runner (a hosted run) the image's SVC_AGENT_USER is that range.
    expect((await resolveAgentUser({ ...req, runner: true })).pool).not.toBeNull();
  });

  it('the reserved range is what the runner image sets, and no host range around it is refused', async () => {
    const { readFileSync } = await import('node:fs');
    const containerfile = readFileSync(join(import.meta.dirname, '../../../Containerfile'), 'utf8');
    expect(containerfile).toContain(`SVC_AGENT_USER=${RUNNER_AGENT_UIDS.first}-${RUNNER_AGENT_UIDS.last}`);
    for (const asked of ['10001-10005', '40000-40063', '60000-65519'])
      expect((await resolveAgentUser({ asked, source: '--agent-user', uid: 0, lookup: lookup([]) })).pool).toMatchObject({ kind: 'range' });
  });

  it('asks the system for users by name (id), and knows no made-up one', async () => {
    expect(await lookupUser('root')).toEqual({ uid: 0, gid: 0 });
    expect(await lookupUser('no-such-user-svc-test')).toBeNull();
    expect(await lookupUser('-u')).toBeNull();
  });
});

describe.runIf(process.getuid?.() === 0)("svc run as root with a pool reaching into the runners' uids", () => {
  it('is refused: one line, exit 2, from the flag and from SVC_AGENT_USER', async () => {
    const server = await startLocalServer();
    try {
      const env = isolatedEnv({ SVC_BASE_URL: server.url, SVC_TOKEN: server.token, SVC_PROJECT: 'DEMO' });
      const repo = await makeRepo();
      const flag = await svcInProcess(['run', 'DEMO-1', '--agent-user', '65500-65530', '--agent-cmd', 'true', '--repo', repo], { env });
      expect([flag.code, flag.stdout, flag.stderr]).toEqual([
        2,
        '',
        "svc: --agent-user: '65500-65530' overlaps uids 65520-65533, which hosted runners' agents use; pass uids outside them\n",
      ]);
      const variable = await svcInProcess(['run', 'DEMO-1', '--agent-cmd', 'true', '--repo', repo], { env: { ...env, SVC_AGENT_USER: '65525' } });
      expect([variable.code, variable.stderr]).toEqual([
        2,
        "svc: SVC_AGENT_USER: '65525' overlaps uids 65520-65533, which hosted runners' agents use; pass uids outside them\n",
      ]);
    } finally {
      expect(await server.stop()).toEqual([]);
    }
  });
});

describe('ensurePrivateDir', () => {
  it("creates a missing folder 0700 and closes an open one of svc's", async () => {
    const root = mkdtempSync(join(tmpdir(), 'svc-private-'));
    await ensurePrivateDir(join(root, 'a', 'b'));
    expect(statSync(join(root, 'a', 'b')).mode & 0o777).toBe(0o700);
    mkdirSync(join(root, 'open'), { mode: 0o755 });
    await ensurePrivateDir(join(root, 'open'));
    expect(statSync(join(root, 'open')).mode & 0o777).toBe(0o700);
  });
});
