// The uid pool of the agent boundary (src/dispatch/boundary/pool.ts), as root: a lease per leg,
// machine-wide; a pool of one takes turns; a dead owner's lease is taken over with its processes
// killed; releasing kills every process of the uid, however detached; a named pool that cannot
// make its users says so in one line. uids of an unused range keep the test out of real pools.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { acquireAgentUser, freeStaleLeases, leaseDir } from '../../../src/dispatch/boundary/pool.js';
import { AgentUserError, type AgentPoolSpec } from '../../../src/dispatch/boundary/user.js';

const isRoot = process.getuid?.() === 0;

/** A process of `uid` in a session of its own (detached: setsid), as an agent's survivor would be. */
function detachedSleeper(uid: number): number {
  const child = spawn('sleep', ['300'], { uid, gid: uid, detached: true, stdio: 'ignore' });
  child.unref();
  return child.pid!;
}

function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 25));
  expect(check(), what).toBe(true);
}

describe.skipIf(!isRoot)('the agent uid pool', () => {
  it('leases distinct uids, and a released one is free again', async () => {
    const pool: AgentPoolSpec = { kind: 'range', first: 47101, last: 47102 };
    const a = await acquireAgentUser(pool);
    const b = await acquireAgentUser(pool);
    expect([a.user.uid, b.user.uid].sort()).toEqual([47101, 47102]);
    expect(existsSync(join(leaseDir(), String(a.user.uid)))).toBe(true);
    await a.release();
    expect(existsSync(join(leaseDir(), String(a.user.uid)))).toBe(false);
    const c = await acquireAgentUser(pool);
    expect(c.user.uid).toBe(a.user.uid);
    await Promise.all([b.release(), c.release()]);
  });

  it('a pool of one takes turns, saying once that it waits', async () => {
    const pool: AgentPoolSpec = { kind: 'user', user: { name: '47103', uid: 47103, gid: 47103 } };
    const first = await acquireAgentUser(pool);
    const said: string[] = [];
    let second: Awaited<ReturnType<typeof acquireAgentUser>> | null = null;
    const waiting = acquireAgentUser(pool, { onWait: (l) => said.push(l) }).then((l) => (second = l));
    await until(() => said.length > 0, 'the wait was said');
    expect(second).toBeNull();
    await first.release();
    await waiting;
    expect(second!.user.uid).toBe(47103);
    expect(said).toEqual(['every agent user of 47103 is in use; waiting for one']);
    await second!.release();
  });

  it('releasing kills every process of the uid, detached ones too', async () => {
    const lease = await acquireAgentUser({ kind: 'range', first: 47104, last: 47104 });
    const pid = detachedSleeper(47104);
    await until(() => running(pid), 'the sleeper runs');
    await lease.release();
    await until(() => !running(pid), 'the sleeper is gone');
  });

  it("a lease whose owner died is taken over, and the uid's leftovers are killed first", async () => {
    const uid = 47105;
    // A lease of a process that is gone (pid 2^22 - 1 is past any pid_max default).
    writeFileSync(join(leaseDir(), String(uid)), JSON.stringify({ pid: 4_194_303, start: '1' }), { mode: 0o600 });
    const pid = detachedSleeper(uid);
    await until(() => running(pid), 'the sleeper runs');
    const lease = await acquireAgentUser({ kind: 'range', first: uid, last: uid });
    expect(lease.user.uid).toBe(uid);
    await until(() => !running(pid), "the dead owner's leftover is gone");
    await lease.release();
    // freeStaleLeases does the same for `runs recover`.
    writeFileSync(join(leaseDir(), String(uid)), JSON.stringify({ pid: 4_194_303, start: '1' }), { mode: 0o600 });
    expect(await freeStaleLeases()).toContain(uid);
    expect(existsSync(join(leaseDir(), String(uid)))).toBe(false);
  });

  it('a named pool whose users cannot be made says so in one line', async () => {
    vi.stubEnv('PATH', '/nonexistent');
    const err = await acquireAgentUser({ kind: 'named', prefix: 'svc-test-nouseradd', max: 1 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AgentUserError);
    expect((err as Error).message).toMatch(
      /^could not create the agent user svc-test-nouseradd-1: .*; create it \(useradd --system svc-test-nouseradd-1\), or pass --agent-user FIRST-LAST/,
    );
    expect((err as Error).message).not.toContain('\n');
  });
});
