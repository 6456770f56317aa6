// followGroup, the process-group runner under both the agent (run-leg.ts) and a workflow step
// (run-step.ts): output per stream, one end after the leader's exit, and nothing of the group
// left running after it, whether it held the pipes or let go of them.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { followGroup, type GroupExit } from '../../../src/dispatch/agent/process-group.js';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Runs `sh -c script` as followGroup does for its callers; resolves with what it heard. */
function follow(script: string, onOutput: (chunk: Buffer, name: 'stdout' | 'stderr') => void = () => {}) {
  const child = spawn('sh', ['-c', script], { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const exits: GroupExit[] = [];
  return new Promise<{ exits: GroupExit[]; end: GroupExit; ends: number }>((resolve) => {
    let ends = 0;
    followGroup(child, {
      onOutput,
      onExit: (exit) => exits.push(exit),
      onEnd: (end) => {
        ends++;
        // A second end would show up here before the test reads `ends`.
        setTimeout(() => resolve({ exits, end, ends }), 50);
      },
    });
  });
}

describe('followGroup', () => {
  it('hands on each stream, then ends once with the leader\'s exit; a throwing hook stops nothing', async () => {
    const seen: string[] = [];
    let calls = 0;
    const r = await follow('echo out; echo err >&2; exit 3', (chunk, name) => {
      calls++;
      seen.push(`${name}:${chunk.toString().trim()}`);
      throw new Error('a log that cannot be written');
    });
    expect(seen.sort()).toEqual(['stderr:err', 'stdout:out']);
    expect(calls).toBe(2);
    expect(r).toEqual({ exits: [{ code: 3, signal: null }], end: { code: 3, signal: null }, ends: 1 });
  });

  it('ends a group member that let go of the pipes after the leader exited but kept running', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-group-'));
    const pidFile = join(dir, 'bg.pid');
    try {
      // The background member holds the pipes a moment past the leader's exit, then lets go of
      // them (inside the drain time) and goes on running.
      const r = await follow(`(sleep 0.3; exec >/dev/null 2>&1; exec sleep 30) & echo $! > ${pidFile}; exit 0`);
      expect(r.end).toEqual({ code: 0, signal: null });
      const bg = Number(await readFile(pidFile, 'utf8'));
      await vi.waitFor(() => expect(alive(bg)).toBe(false), { timeout: 5_000, interval: 50 });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('cuts pipes a group member still holds after the drain time, and ends that member', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-group-'));
    const pidFile = join(dir, 'bg.pid');
    try {
      const started = Date.now();
      const r = await follow(`sleep 30 & echo $! > ${pidFile}; exit 0`);
      expect(r.end).toEqual({ code: 0, signal: null });
      // Ended by the drain time (1 s), not by the member's 30 s.
      expect(Date.now() - started).toBeLessThan(10_000);
      const bg = Number(await readFile(pidFile, 'utf8'));
      await vi.waitFor(() => expect(alive(bg)).toBe(false), { timeout: 5_000, interval: 50 });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
