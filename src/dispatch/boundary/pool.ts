// A uid per concurrent leg (docs/agents.md, docs/trust.md): a leg leases one uid of its pool for
// as long as it runs, machine-wide, so two legs (of one svc or of two) never share one. A lease
// is a file named after the uid in a root-only folder, holding the owner's pid and start time; a
// lease whose owner is gone (kill -9) is stale and taken over. When a leg ends, and before a uid
// whose owner died is handed out, every process of that uid is killed, however it detached (as Nix
// does with its build users); before every hand-out its files in the shared temp folders and its
// IPC objects are removed: nothing of one leg outlives it into the next.
import { readdirSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { dropLease, ownPrivateFolder, takeLease } from '../state/lease.js';
import { isAlive, readMark } from '../state/run-lock.js';
import { lastLine, run } from '../process/run.js';
import { sweepUid } from './uid-leftovers.js';
import { AgentUserError, describePool, lookupUser, refuseRunnerUids, type AgentPoolSpec, type AgentUser } from './user.js';

/** Where leases live: root's own folder under /run, else under /tmp (a container without /run). */
const LEASE_ROOTS = ['/run/svc-agents', '/tmp/svc-agents'];

/** How often a leg that found every uid of its pool taken looks again. */
const WAIT_POLL_MS = 200;

/**
 * A uid held for one leg. `release` kills what is left of it and frees the uid; `killed: true`
 * when the leg's last step (removing its folder) already killed everything and ran nothing after.
 */
export interface AgentLease {
  user: AgentUser;
  release(opts?: { killed?: boolean }): Promise<void>;
}

/**
 * The lease folder: made 0700 by svc's user, or found so. A folder someone else made (an agent
 * that got to /tmp first) is refused rather than trusted.
 */
export function leaseDir(): string {
  try {
    return ownPrivateFolder(LEASE_ROOTS);
  } catch (error) {
    throw new AgentUserError(`cannot keep agent user leases: ${(error as Error).message}`);
  }
}

/**
 * Shell that, run as a uid, kills every other process of that uid (`kill -9 -1` reaches all of the
 * caller's processes but itself, detached or not) until none is left to signal. Bounded: zombies
 * nobody reaps still count as signalled. Steps of a leg that run as its uid begin with it.
 */
export const KILL_ALL = 'n=0; while kill -9 -1 2>/dev/null && [ $n -lt 20 ]; do n=$((n+1)); done';

/** Kills every process of `user`'s uid, from a shell running as that uid. */
export async function killAllOf(user: { uid: number; gid: number }): Promise<void> {
  await run('/bin/sh', ['-c', `${KILL_ALL}; exit 0`], { user, cwd: '/', env: {}, timeoutMs: 0 });
}

const known = new Map<string, Promise<{ uid: number; gid: number } | null>>();

function cachedLookup(name: string): Promise<{ uid: number; gid: number } | null> {
  let p = known.get(name);
  if (!p) {
    p = lookupUser(name);
    known.set(name, p);
  }
  return p;
}

/** Makes a member of a named pool: a system user with a group of its own, no home, no login. */
async function createUser(name: string): Promise<{ uid: number; gid: number }> {
  const r = await run(
    'useradd',
    ['--system', '--user-group', '--no-create-home', '--home-dir', '/nonexistent', '--shell', '/usr/sbin/nologin', '--comment', 'svc agent', name],
    { cwd: '/', timeoutMs: 0, maxBuffer: 1 << 20 },
  );
  const made = r.code === 0 ? null : lastLine(r);
  known.delete(name);
  const ids = await cachedLookup(name);
  // Another svc may have made it at the same moment (useradd then says it exists): found is fine.
  if (ids) return ids;
  throw new AgentUserError(
    `could not create the agent user ${name}: ${made ?? 'not found after useradd'}; create it (useradd --system ${name}), or pass --agent-user FIRST-LAST (a uid range) or none`,
  );
}

async function* members(pool: AgentPoolSpec): AsyncGenerator<AgentUser> {
  if (pool.kind === 'user') {
    yield pool.user;
  } else if (pool.kind === 'range') {
    for (let uid = pool.first; uid <= pool.last; uid++) yield { name: String(uid), uid, gid: uid };
  } else {
    for (let i = 1; i <= pool.max; i++) {
      const name = `${pool.prefix}-${i}`;
      const ids = (await cachedLookup(name)) ?? (await createUser(name));
      if (ids.uid === 0) throw new AgentUserError(`the agent user ${name} is root, which is no boundary`);
      // Named pools live outside runners (the image sets a range): a member made by hand with a runner's uid is refused.
      refuseRunnerUids(`the agent user ${name}`, String(ids.uid), ids.uid, ids.uid);
      yield { name, ...ids };
    }
  }
}

/**
 * Leases a free uid of `pool`, waiting while every one is taken (a pool of one user and
 * `--parallel 2`, or a second svc). Leftovers of the uid's last leg (processes, files in the shared
 * temp folders, IPC objects) are removed before it is handed out.
 */
export async function acquireAgentUser(pool: AgentPoolSpec, opts: { signal?: AbortSignal; onWait?: (line: string) => void } = {}): Promise<AgentLease> {
  const dir = leaseDir();
  let said = false;
  for (;;) {
    for await (const user of members(pool)) {
      const taken = takeLease(dir, String(user.uid));
      if (!taken) continue;
      // A released lease killed its uid's processes before it was freed; one whose owner died did not.
      if (taken === 'stale') await killAllOf(user);
      // What an earlier leg of the uid left outside its folder goes before this leg starts: here,
      // beside git making the card's worktree (../lifecycle/leg.ts), not on the path of a leg's end.
      await sweepUid(user.uid);
      let released = false;
      return {
        user,
        async release(how = {}) {
          if (released) return;
          released = true;
          if (!how.killed) await killAllOf(user);
          dropLease(dir, String(user.uid));
        },
      };
    }
    if (!said) {
      said = true;
      opts.onWait?.(`every agent user of ${describePool(pool)} is in use; waiting for one`);
    }
    if (opts.signal?.aborted) throw new AgentUserError('interrupted while waiting for an agent user');
    await sleep(WAIT_POLL_MS, undefined, opts.signal ? { signal: opts.signal } : {}).catch(() => undefined);
  }
}

/**
 * Frees the leases of owners that are gone (svc killed with -9): their uid's leftover processes are
 * killed and the lease removed. For `runs recover` and `worktrees prune`; returns the uids freed.
 */
export async function freeStaleLeases(): Promise<number[]> {
  let dir: string;
  try {
    dir = leaseDir();
  } catch {
    return [];
  }
  const freed: number[] = [];
  for (const name of readdirSync(dir)) {
    if (!/^\d+$/.test(name)) continue;
    const holder = readMark(join(dir, name));
    if (holder && isAlive(holder)) continue;
    if (!takeLease(dir, name)) continue;
    await killAllOf({ uid: Number(name), gid: Number(name) });
    await sweepUid(Number(name));
    unlinkSync(join(dir, name));
    freed.push(Number(name));
  }
  return freed;
}
