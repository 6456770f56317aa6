// A terminal that reports 0 columns (`script` whose own stdin is no terminal, some CI consoles) is a
// terminal of unknown width. ora divided by the width: with 0 it wrote cursor-up codes
// forever (315 MB in 10 minutes) with the event loop blocked, and the agent was never reaped.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest';
import type { DispatchRun } from '../../src/contract/types.js';
import { withKnownWidth } from '../../src/ui/output.js';
import { testOutput } from '../support/output.js';
import { createRunProgress } from '../../src/ui/run-progress.js';
import { BIN, isolatedEnv, makeRepo } from '../support/cli.js';
import { TtyStream } from '../support/context.js';
import { startTestService, type TestService } from '../support/service.js';

const CURSOR_UP = '\x1b[1A';
const HIDE_CURSOR = '\x1b[?25l';
// ora opens every frame it draws on a terminal with this (synchronized output).
const FRAME = '\x1b[?2026h';
const count = (text: string, part: string) => text.split(part).length - 1;

describe('0 columns is an unknown width', () => {
  // The spinner's frames run on fake time, advanced by the test.
  afterEach(() => {
    vi.useRealTimers();
  });

  test('the output object and the stream ora draws on report no width, and a spinner draws a bounded amount', async () => {
    const stdout = new TtyStream(0);
    const stderr = new TtyStream(0);
    const out = testOutput({ stdout, stderr, env: { TERM: 'xterm-256color' } });
    expect(out.interactive).toBe(true);
    expect(out.columns).toBe(100);
    expect(out.progressStream.columns).toBeUndefined();
    // A real width passes through, and follows a resize.
    const wide = new TtyStream(80);
    const seen = withKnownWidth(wide);
    expect(seen.columns).toBe(80);
    wide.columns = 132;
    expect(seen.columns).toBe(132);

    vi.useFakeTimers();
    const progress = createRunProgress(out);
    progress.legStarted({ key: 'PROJ-1', title: 'a card with a title', index: 1, total: 1, branch: 'svc/PROJ-1' });
    // ora loads asynchronously; once it has, the spinner is drawn: then half a second of frames, more
    // than the first one.
    await vi.dynamicImportSettled();
    expect(count(stderr.text, HIDE_CURSOR)).toBe(1);
    await vi.advanceTimersByTimeAsync(500);
    expect(count(stderr.text, FRAME)).toBeGreaterThan(1);
    progress.stop();
    expect(stderr.text).toContain('PROJ-1');
    expect(stderr.text.length).toBeLessThan(20_000);
    expect(count(stderr.text, CURSOR_UP)).toBeLessThan(50);
  });
});

describe('svc run under `script` with no terminal on its stdin (a 0×0 pty)', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(async () => {
    await svc.close();
  });

  test('the run ends, the agent is reaped, and the output stays small', async () => {
    const key = svc.admin.createWorkItem({ projectKey: svc.projectKey, kind: 'task', title: 'a card under script', type: 'code' }).key;
    const repo = await makeRepo();
    const dir = mkdtempSync(join(tmpdir(), 'svc-zero-'));
    const pidFile = join(dir, 'agent.pid');
    // The agent stays a while (so the spinner draws many frames), records its pid, then commits.
    const agent = `sh -c 'echo $$ > ${pidFile}; sleep 2; git -c user.name=a -c user.email=a@example.invalid commit -q --allow-empty -m "$SVC_CARD_KEY: done"'`;
    const line = [process.execPath, BIN, 'run', key, '--agent-cmd', agent, '--repo', repo].map((w) => `'${w.replace(/'/g, `'\\''`)}'`).join(' ');
    const env = isolatedEnv({ SVC_BASE_URL: svc.url, SVC_TOKEN: svc.token, TERM: 'xterm-256color' });
    delete env.NO_COLOR;
    const child = spawn('script', ['-qfec', line, '/dev/null'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let bytes = 0;
    let text = '';
    const take = (d: Buffer) => {
      bytes += d.length;
      if (text.length < 100_000) text += d.toString('utf8');
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    child.stdin.end('\n');
    const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    const code = await new Promise<number | null>((done) => child.on('close', (c) => done(c)));
    clearTimeout(killer);

    expect(code, text.slice(-2000)).toBe(0);
    expect(bytes).toBeLessThan(64 * 1024);
    // Drawn as on a terminal: the spinner's frames, then the summary under the run id.
    expect(text).toContain('\x1b[?25l');
    const runId = /run (\S+) · run · completed/.exec(text)?.[1];
    expect(runId, text.slice(-2000)).toBeDefined();
    const record = (await svc.call('GET', `/dispatch-runs/${runId}`)).body as DispatchRun;
    expect(record).toMatchObject({ status: 'succeeded' });
    expect(record.cards[0]).toMatchObject({ workItemKey: key, disposition: 'implemented' });
    expect(existsSync(pidFile)).toBe(true);
    const pid = Number(readFileSync(pidFile, 'utf8').trim());
    expect(() => process.kill(pid, 0)).toThrow(/ESRCH/);
  }, 40_000);
});
