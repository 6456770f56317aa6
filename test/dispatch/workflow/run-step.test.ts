// One workflow step (src/dispatch/workflow/run-step.ts): its exit status, its time limit, an
// interruption, and nothing of its process group left behind when it ends.
import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { runStep, stepOutcome, type StepSpec } from '../../../src/dispatch/workflow/run-step.js';

const spec = (command: string, over: Partial<StepSpec> = {}) => {
  const out: string[] = [];
  return {
    out,
    spec: {
      command,
      cwd: '/',
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      timeoutMs: 10_000,
      killGraceMs: 200,
      onOutput: (c: Buffer) => out.push(c.toString()),
      ...over,
    },
  };
};

/** Running (a zombie nobody reaped yet is not: the container's init may be slow to reap). */
const alive = (pid: number) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
};

describe('runStep', () => {
  test('passes the exit status and the output on', async () => {
    const { out, spec: s } = spec('echo out; echo err >&2; exit 4');
    const r = await runStep(s);
    expect(r).toMatchObject({ exitCode: 4, stopped: null, error: null });
    expect(out.join('')).toContain('out');
    expect(out.join('')).toContain('err');
    expect(stepOutcome(r, '10s')).toBe('exit 4');
  });

  test('a step past its time limit is stopped, its whole group with it', async () => {
    const { out, spec: s } = spec('sleep 30 & echo $!; wait', { timeoutMs: 300 });
    const r = await runStep(s);
    expect(r.stopped).toBe('timeout');
    expect(stepOutcome(r, '300ms')).toBe('timed out after 300ms');
    await expect.poll(() => alive(Number(out.join('').trim()))).toBe(false);
  });

  test('what a step leaves running in the background ends with it', async () => {
    const { out, spec: s } = spec('sleep 30 >/dev/null 2>&1 & echo $!');
    const r = await runStep(s);
    expect(r.exitCode).toBe(0);
    const pid = Number(out.join('').trim());
    // SIGKILL was sent before runStep returned; the kernel reaps it at once.
    await expect.poll(() => alive(pid)).toBe(false);
  });

  test('an aborted run stops the step', async () => {
    const controller = new AbortController();
    const { spec: s } = spec('sleep 30', { signal: controller.signal });
    const running = runStep(s);
    controller.abort();
    expect(await running).toMatchObject({ stopped: 'interrupted' });
  });
});
