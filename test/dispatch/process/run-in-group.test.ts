// followGroup, the process-group runner under both the agent (run-process.ts) and a workflow step
// (run-step.ts): output per stream, one end after the leader's exit, and nothing of the group
// left running after it, whether it held the pipes or let go of them.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { followGroup, type GroupExit } from '../../../src/dispatch/process/run-in-group.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-group-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Still running: its /proc entry is there and not a zombie (which has ended, and waits for its reaper). */
function alive(pid: number): boolean {
  const stat = existsSync(`/proc/${pid}/stat`) ? readFileSync(`/proc/${pid}/stat`, 'utf8') : '';
  return stat !== '' && !/\) Z /.test(stat);
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
  it("hands on each stream, then ends once with the leader's exit; a throwing hook stops nothing", async () => {
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

  it.each([
    // Holds the pipes a moment past the leader's exit, lets go of them (within the drain time) and runs on.
    ['let go of the pipes after the leader exited but kept running', '(sleep 0.3; exec >/dev/null 2>&1; exec sleep 30)'],
    // Holds them for good: they are cut after the drain time (1 s), not after its 30 s.
    ['still held the pipes after the drain time', 'sleep 30'],
  ])('ends a group member that %s', async (_row, member) => {
    const pidFile = join(dir, `${member.length}.pid`);
    const started = Date.now();
    const r = await follow(`${member} & echo $! > ${pidFile}; exit 0`);
    expect(r.end).toEqual({ code: 0, signal: null });
    expect(Date.now() - started).toBeLessThan(10_000);
    const pid = Number(await readFile(pidFile, 'utf8'));
    await vi.waitFor(() => expect(alive(pid)).toBe(false), { timeout: 5_000, interval: 50 });
  });
});
