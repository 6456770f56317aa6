// The progress view in-process, on a stream that says it is a terminal: what the real-terminal test
// cannot time precisely (legs starting in the same tick, a leg ending while ora still loads), and
// the durations it prints.
import { stripVTControlCharacters as plain } from 'node:util';
import { afterEach, beforeAll, beforeEach, describe, expect, test, vi } from 'vitest';
import type { LegSummary } from '../../src/dispatch/ports.js';
import { colorLevel } from '../../src/ui/output.js';
import { testOutput } from '../support/output.js';
import { createRunProgress, seconds } from '../../src/ui/run-progress.js';
import { TtyStream } from '../support/context.js';

const HIDE_CURSOR = '\x1b[?25l';
const count = (text: string, part: string) => text.split(part).length - 1;

function terminal() {
  const stdout = new TtyStream();
  const stderr = new TtyStream();
  const out = testOutput({ stdout, stderr, env: { TERM: 'xterm-256color' } });
  expect(out.interactive).toBe(true);
  return { stderr, progress: createRunProgress(out) };
}

const leg = (key: string): LegSummary => ({
  key,
  title: `Card ${key}`,
  disposition: 'implemented',
  durationMs: 1200,
  exitCode: 0,
  reason: null,
  costUsd: null,
  tokens: { in: null, out: null },
  sessionBranch: `svc/${key}`,
});
const started = (key: string, index: number) => ({ key, title: `Card ${key}`, index, total: 2, branch: `svc/${key}` });

/**
 * True when nothing more is written to the stream over a second of fake time: no spinner is left
 * animating (ora draws a frame every 80 ms, the view renews its text every second).
 */
async function quiet(stream: TtyStream): Promise<boolean> {
  const before = stream.text.length;
  await vi.advanceTimersByTimeAsync(1_000);
  return stream.text.length === before;
}

// Time is fake here: ora's frames and the view's ticker run only when a test advances it. ora still
// loads asynchronously (a real import); vi.dynamicImportSettled() waits until the view's import has
// resolved and what the view does then has run. Fake timers are global to the worker: not concurrent.
describe('the progress view on a terminal', () => {
  // ora's first import is slow on a cold machine (a fresh clone in CI); loaded once here, the view's
  // own import still resolves asynchronously, which is what these tests are about.
  beforeAll(async () => {
    await import('ora');
  });
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  test('legs started in the same tick share one spinner, and stop() leaves none animating', async () => {
    const { stderr, progress } = terminal();
    progress.legStarted(started('A-1', 1));
    progress.legStarted(started('A-2', 2));
    await vi.dynamicImportSettled();
    expect(count(stderr.text, HIDE_CURSOR)).toBe(1);
    // The spinner animates as fake time passes: quiet() sees a spinner left running.
    expect(await quiet(stderr)).toBe(false);
    progress.legFinished(leg('A-1'));
    progress.legFinished(leg('A-2'));
    progress.stop();
    expect(plain(stderr.text)).toMatch(/✔ A-1 Card A-1 1\.2s implemented/);
    expect(plain(stderr.text)).toMatch(/✔ A-2 Card A-2 1\.2s implemented/);
    expect(await quiet(stderr)).toBe(true);
  });

  // Above, the last leg's end already cleared the spinner; a failing command stops with legs running.
  test('stop() while a leg runs leaves no spinner animating', async () => {
    const { stderr, progress } = terminal();
    progress.legStarted(started('D-1', 1));
    await vi.dynamicImportSettled();
    expect(count(stderr.text, HIDE_CURSOR)).toBe(1);
    expect(await quiet(stderr)).toBe(false);
    progress.stop();
    expect(await quiet(stderr)).toBe(true);
  });

  test('a leg that ends before ora has loaded starts no spinner', async () => {
    const { stderr, progress } = terminal();
    progress.legStarted(started('B-1', 1));
    progress.legFinished(leg('B-1'));
    await vi.dynamicImportSettled();
    expect(plain(stderr.text)).toBe('✔ B-1 Card B-1 1.2s implemented\n');
    expect(count(stderr.text, HIDE_CURSOR)).toBe(0);
    expect(await quiet(stderr)).toBe(true);
    progress.stop();
  });

  test('stop() while ora loads: no spinner afterwards', async () => {
    const { stderr, progress } = terminal();
    progress.legStarted(started('C-1', 1));
    progress.stop();
    await vi.dynamicImportSettled();
    expect(count(stderr.text, HIDE_CURSOR)).toBe(0);
    expect(await quiet(stderr)).toBe(true);
  });
});

describe('durations', () => {
  test.each([
    [0, '0.0s'],
    [1_234, '1.2s'],
    [59_940, '59.9s'],
    [59_960, '1m00s'],
    [60_000, '1m00s'],
    [119_600, '2m00s'],
    [125_400, '2m05s'],
    [3_600_000, '60m00s'],
  ])('%i ms → %s', (ms, text) => {
    expect(seconds(ms)).toBe(text);
  });
});

describe('colour and animation switches', () => {
  test.each([
    ['nothing set', {}, 1, true],
    ['NO_COLOR=1', { NO_COLOR: '1' }, 0, false],
    // no-color.org: any non-empty value, 0 included.
    ['NO_COLOR=0', { NO_COLOR: '0' }, 0, false],
    ['NO_COLOR empty', { NO_COLOR: '' }, 1, true],
    ['CI=true', { CI: 'true' }, 1, false],
    ['CI=false', { CI: 'false' }, 1, true],
    ['FORCE_COLOR=0', { FORCE_COLOR: '0' }, 0, true],
  ])('on a terminal with %s: colour level %i, animated %s', (_name, env, level, animated) => {
    const stdout = new TtyStream();
    const stderr = new TtyStream();
    expect(colorLevel({ stdout, stderr, env }, stderr)).toBe(level);
    expect(testOutput({ stdout, stderr, env }).interactive).toBe(animated);
  });
});
