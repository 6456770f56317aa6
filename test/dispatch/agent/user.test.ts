// Which user an agent runs as (--agent-user, SVC_AGENT_USER, stored agentUser; docs/trust.md), and
// svc's private folders. The table uses an injected user lookup; one case asks the real system.
import { mkdirSync, mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AgentUserError, lookupUser, resolveAgentUser } from '../../../src/dispatch/agent/user.js';
import { ensurePrivateDir } from '../../../src/dispatch/private-dir.js';

const users: Record<string, { uid: number; gid: number }> = { 'svc-agent': { uid: 990, gid: 990 }, nobody: { uid: 65534, gid: 65534 }, root: { uid: 0, gid: 0 }, dev: { uid: 1000, gid: 1000 } };
const lookup = (known: string[]) => async (name: string) => (known.includes(name) ? users[name]! : null);
const all = Object.keys(users);

describe('resolveAgentUser', () => {
  it.each([
    ['root, nothing asked, svc-agent exists', undefined, 0, all, { name: 'svc-agent', uid: 990, gid: 990 }],
    ['root, nothing asked, only nobody', undefined, 0, ['nobody', 'root'], { name: 'nobody', uid: 65534, gid: 65534 }],
    ['not root, nothing asked: svc\'s own user', undefined, 1000, all, null],
    ['root asks a named user', 'dev', 0, all, { name: 'dev', uid: 1000, gid: 1000 }],
    ['root asks a numeric uid without a passwd entry', '4242', 0, [], { name: '4242', uid: 4242, gid: 4242 }],
    ['root asks uid:gid', '4242:100', 0, [], { name: '4242:100', uid: 4242, gid: 100 }],
    ['a non-root svc names itself: no switch', 'dev', 1000, all, null],
  ] as const)('%s', async (_name, asked, uid, known, user) => {
    const choice = await resolveAgentUser({ asked, source: '--agent-user', uid, lookup: lookup([...known]) });
    expect(choice.user).toEqual(user);
    expect(choice.warning).toBeNull();
  });

  it('none keeps svc\'s user: a warning as root, silence otherwise', async () => {
    const asRoot = await resolveAgentUser({ asked: 'none', source: 'SVC_AGENT_USER', uid: 0, lookup: lookup(all) });
    expect(asRoot).toEqual({ user: null, warning: expect.stringMatching(/^SVC_AGENT_USER none: agents run as root/) });
    expect(await resolveAgentUser({ asked: 'none', source: '--agent-user', uid: 1000, lookup: lookup(all) })).toEqual({ user: null, warning: null });
  });

  it.each([
    ['an unknown user', 'ghost', 0, all, /--agent-user: no user 'ghost'/],
    ['root as the agent user', 'root', 0, all, /is root, which is no boundary/],
    ['uid 0 by number', '0', 0, [], /is root, which is no boundary/],
    ['another user without root', 'nobody', 1000, all, /needs svc to run as root/],
    ['root with neither default user', undefined, 0, ['root'], /neither svc-agent nor nobody exists/],
  ] as const)('refuses %s', async (_name, asked, uid, known, message) => {
    await expect(resolveAgentUser({ asked, source: '--agent-user', uid, lookup: lookup([...known]) })).rejects.toThrow(AgentUserError);
    await expect(resolveAgentUser({ asked, source: '--agent-user', uid, lookup: lookup([...known]) })).rejects.toThrow(message);
  });

  it('asks the system for users by name (id), and knows no made-up one', async () => {
    expect(await lookupUser('root')).toEqual({ uid: 0, gid: 0 });
    expect(await lookupUser('no-such-user-svc-test')).toBeNull();
    expect(await lookupUser('-u')).toBeNull();
  });
});

describe('ensurePrivateDir', () => {
  it('creates a missing folder 0700 and closes an open one of svc\'s', async () => {
    const root = mkdtempSync(join(tmpdir(), 'svc-private-'));
    await ensurePrivateDir(join(root, 'a', 'b'));
    expect(statSync(join(root, 'a', 'b')).mode & 0o777).toBe(0o700);
    mkdirSync(join(root, 'open'), { mode: 0o755 });
    await ensurePrivateDir(join(root, 'open'));
    expect(statSync(join(root, 'open')).mode & 0o777).toBe(0o700);
  });
});
