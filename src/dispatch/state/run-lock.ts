// A live run holds a lock in its state folder: `<run>/lock`, the owning process's id and start
// time. `kill(pid, 0)` alone is fooled by pid reuse after a reboot or a long night, so the start
// time from /proc/<pid>/stat must match too (where there is no /proc, the pid alone decides).
// Recover, prune and every resuming command leave a locked run alone; a lock whose owner is gone
// (kill -9, a lost machine) is stale and taken over.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SvcError } from '../../api/errors.js';
import { listRunRecords, runPaths } from './folder.js';

/** Who holds a lock: enough to tell a live owner from a reused pid. */
export interface ProcessMark {
  pid: number;
  /** Field 22 of /proc/<pid>/stat (clock ticks since boot); null where there is no /proc. */
  start: string | null;
}

/** The start time of `pid` from /proc, or null (no such process, or no /proc). */
export function processStart(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count from the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[19] ?? null;
  } catch {
    return null;
  }
}

let self: ProcessMark | null = null;

/** This process's mark: read once, since neither its pid nor its start time changes (a lease per leg asked again). */
export function selfMark(): ProcessMark {
  self ??= { pid: process.pid, start: processStart(process.pid) };
  return { ...self };
}

/** Whether the process a mark names still runs (and is the same process, not a reused pid). */
export function isAlive(mark: ProcessMark): boolean {
  try {
    process.kill(mark.pid, 0);
  } catch (error) {
    // EPERM: it exists, owned by another user.
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  if (mark.start === null) return true;
  const now = processStart(mark.pid);
  return now === null || now === mark.start;
}

function lockPath(stateDir: string, runId: string): string {
  return join(runPaths(stateDir, runId).dir, 'lock');
}

/** The mark in a file (a run's lock, a uid's lease, a legs root's owner), or null when there is none readable. */
export function readMark(path: string): ProcessMark | null {
  try {
    const mark = JSON.parse(readFileSync(path, 'utf8')) as ProcessMark;
    return Number.isInteger(mark?.pid) && mark.pid > 0 ? { pid: mark.pid, start: typeof mark.start === 'string' ? mark.start : null } : null;
  } catch {
    return null;
  }
}

/** The live owner of a run's lock, or null (no lock, a torn one, or its owner is gone). */
export function runLockOwner(stateDir: string, runId: string): ProcessMark | null {
  const mark = readMark(lockPath(stateDir, runId));
  return mark && isAlive(mark) ? mark : null;
}

/** Whether another live process on this machine is running `runId` (this process excluded). */
export function isRunLive(stateDir: string, runId: string): boolean {
  const owner = runLockOwner(stateDir, runId);
  return owner !== null && owner.pid !== process.pid;
}

/** The run is held by another live process: a one-line error, exit 1. */
export class RunLockedError extends SvcError {
  readonly kind = 'failed';
  constructor(
    readonly runId: string,
    readonly owner: ProcessMark,
  ) {
    super(`run ${runId} is live in process ${owner.pid} on this machine; leaving it alone`);
    this.name = 'RunLockedError';
  }
}

export interface RunLock {
  release(): void;
}

/**
 * Takes the lock of `runId` for this process; throws RunLockedError when another live process
 * holds it. Written with `wx` so two takers racing for a stale lock cannot both win.
 */
export function acquireRunLock(stateDir: string, runId: string): RunLock {
  const path = lockPath(stateDir, runId);
  const mine = selfMark();
  for (let attempt = 0; ; attempt++) {
    try {
      writeFileSync(path, JSON.stringify(mine) + '\n', { flag: 'wx', mode: 0o600 });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = readMark(path);
      if (owner && owner.pid !== mine.pid && isAlive(owner)) throw new RunLockedError(runId, owner);
      if (attempt > 0) throw error;
      // Stale (or a torn write of a dead owner): take it over.
      rmSync(path, { force: true });
    }
  }
  return {
    release() {
      // Only our own lock goes: a taker after a stale-lock race keeps theirs.
      const owner = readMark(path);
      if (owner && owner.pid === mine.pid) rmSync(path, { force: true });
    },
  };
}

/**
 * SIGKILL to the process group of an agent a dead svc left behind. The group is ours when its
 * leader still runs with the recorded start time, or when the leader is gone but the group is not
 * (a pid is not handed out again while a group of that id lives). Returns whether it was killed.
 */
export function killLeftoverGroup(agent: { pgid: number; start: string | null }): boolean {
  const leaderStart = processStart(agent.pgid);
  if (leaderStart !== null && agent.start !== null && leaderStart !== agent.start) return false;
  try {
    process.kill(-agent.pgid, 'SIGKILL');
    return true;
  } catch {
    return false;
  }
}

/** The runs of the state folder another live process holds, with their cards. */
export function liveRuns(stateDir: string): { runId: string; owner: ProcessMark; keys: string[] }[] {
  const out: { runId: string; owner: ProcessMark; keys: string[] }[] = [];
  for (const record of listRunRecords(stateDir)) {
    const owner = runLockOwner(stateDir, record.runId);
    if (owner && owner.pid !== process.pid) out.push({ runId: record.runId, owner, keys: record.cards.map((c) => c.workItemKey) });
  }
  return out;
}
