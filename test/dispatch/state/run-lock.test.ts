// The lock of a live run: pid and start time, so a dead owner or a reused pid is no owner.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { RunLockedError, acquireRunLock, isRunLive, processStart, runLockOwner } from '../../../src/dispatch/state/run-lock.js';
import { runPaths } from '../../../src/dispatch/state/folder.js';

const sleeper = spawn('sleep', ['30'], { stdio: 'ignore' });
afterAll(() => {
  sleeper.kill('SIGKILL');
});

function stateWith(runId: string, lock?: object): string {
  const stateDir = mkdtempSync(join(tmpdir(), 'svc-lock-'));
  mkdirSync(runPaths(stateDir, runId).dir, { recursive: true });
  if (lock) writeFileSync(join(runPaths(stateDir, runId).dir, 'lock'), JSON.stringify(lock));
  return stateDir;
}

describe('run lock', () => {
  it('is held by another live process: isRunLive, and acquiring it is refused', () => {
    const stateDir = stateWith('run_a', { pid: sleeper.pid, start: processStart(sleeper.pid!) });
    expect(isRunLive(stateDir, 'run_a')).toBe(true);
    expect(() => acquireRunLock(stateDir, 'run_a')).toThrow(RunLockedError);
  });

  it('a dead owner, or a live pid with another start time (reused), holds nothing: the lock is taken over', () => {
    const dead = spawnSync('true').pid;
    for (const lock of [
      { pid: dead, start: '1' },
      { pid: sleeper.pid, start: 'not-its-start' },
    ]) {
      const stateDir = stateWith('run_b', lock);
      expect(isRunLive(stateDir, 'run_b')).toBe(false);
      const held = acquireRunLock(stateDir, 'run_b');
      expect(runLockOwner(stateDir, 'run_b')?.pid).toBe(process.pid);
      // Our own lock is not "live elsewhere".
      expect(isRunLive(stateDir, 'run_b')).toBe(false);
      held.release();
      expect(runLockOwner(stateDir, 'run_b')).toBeNull();
    }
  });

  it('no lock, or a torn one, is no owner', () => {
    expect(isRunLive(stateWith('run_c'), 'run_c')).toBe(false);
    const stateDir = stateWith('run_d');
    writeFileSync(join(runPaths(stateDir, 'run_d').dir, 'lock'), '{"pid":');
    expect(isRunLive(stateDir, 'run_d')).toBe(false);
    acquireRunLock(stateDir, 'run_d').release();
  });
});
