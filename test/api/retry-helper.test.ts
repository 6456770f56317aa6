// The one retry helper (src/api/retry.ts): budgets, backoff and the loop, on an injected clock and
// sleep, never a real wait.
import { describe, expect, test } from 'vitest';
import { backoff, retry, Retrier, WaitBudget } from '../../src/api/retry.js';

function fakeTime(start = 1_000_000) {
  const t = { now: start, slept: [] as number[] };
  return {
    t,
    pacing: {
      now: () => t.now,
      sleep: async (ms: number) => {
        t.slept.push(ms);
        t.now += ms;
      },
      random: () => 0.999,
    },
  };
}

describe('WaitBudget', () => {
  test('counts the time since it began, and never less than the waits it recorded', () => {
    let now = 0;
    const b = new WaitBudget(10_000, () => now);
    now = 3_000;
    expect(b.waitedMs).toBe(3_000);
    b.record(5_000); // an injected sleep that did not move the clock
    expect(b.waitedMs).toBe(5_000);
    expect(b.leftMs).toBe(5_000);
    expect(b.allows(5_000)).toBe(true);
    expect(b.allows(5_001)).toBe(false);
  });

  test('without a clock only the recorded waits count', () => {
    const b = new WaitBudget(1_000);
    expect(b.leftMs).toBe(1_000);
    b.record(400);
    expect(b.leftMs).toBe(600);
  });

  test('a budget inside another spends both, and may not outlast the outer one', () => {
    let now = 0;
    const outer = new WaitBudget(10_000, () => now);
    now = 8_000;
    const inner = new WaitBudget(10_000, () => now, outer);
    expect(inner.leftMs).toBe(2_000);
    inner.record(1_500);
    expect(outer.waitedMs).toBe(8_000); // the clock already covers it
    // The outer's clock (8 s of its 10) still bounds the inner, whose own count is only 1.5 s.
    expect(inner.leftMs).toBe(2_000);
    const lone = new WaitBudget(10_000);
    const nested = new WaitBudget(Infinity, undefined, lone);
    nested.record(4_000);
    expect(lone.leftMs).toBe(6_000);
    expect(nested.leftMs).toBe(6_000);
  });
});

describe('backoff', () => {
  test('full jitter below a ceiling that doubles up to the maximum', () => {
    const shape = { baseMs: 100, maxMs: 1_000 };
    expect([1, 2, 3, 4, 5, 6].map((a) => backoff(a, shape, () => 0.999))).toEqual([99, 199, 399, 799, 999, 999]);
    expect(backoff(3, shape, () => 0)).toBe(0);
    expect(backoff(3, shape, () => 0.5)).toBe(200);
  });
});

describe('retry', () => {
  test('tries again after each failure the decision allows, with the waits it asks for', async () => {
    const { t, pacing } = fakeTime();
    let calls = 0;
    const value = await retry(
      async (attempt) => {
        calls++;
        if (attempt < 3) throw new Error(`fail ${attempt}`);
        return 'ok';
      },
      (_e, r) => r.backoff(),
      new Retrier({ maxWaitMs: 60_000, backoff: { baseMs: 100, maxMs: 1_000 }, pacing }),
    );
    expect(value).toBe('ok');
    expect(calls).toBe(3);
    expect(t.slept).toEqual([99, 199]);
  });

  test('a null decision rethrows the error at once, without waiting', async () => {
    const { t, pacing } = fakeTime();
    const boom = new Error('no retry');
    await expect(
      retry(
        async () => {
          throw boom;
        },
        () => null,
        new Retrier({ pacing }),
      ),
    ).rejects.toBe(boom);
    expect(t.slept).toEqual([]);
  });

  test('gives up with the last error when the next wait would pass the budget, and never waits past it', async () => {
    const { t, pacing } = fakeTime();
    let calls = 0;
    const error = await retry(
      async () => {
        calls++;
        throw new Error(`fail ${calls}`);
      },
      () => 3_000,
      new Retrier({ maxWaitMs: 10_000, pacing }),
    ).catch((e: unknown) => e);
    expect((error as Error).message).toBe('fail 4');
    expect(t.slept).toEqual([3_000, 3_000, 3_000]);
  });

  test('a decision may end the loop with an error of its own', async () => {
    const { pacing } = fakeTime();
    const other = new Error('replaced');
    await expect(
      retry(
        async () => {
          throw new Error('x');
        },
        () => {
          throw other;
        },
        new Retrier({ pacing }),
      ),
    ).rejects.toBe(other);
  });

  test('a wait is cut short by the signal', async () => {
    const stop = new AbortController();
    const r = new Retrier({ maxWaitMs: 60_000, signal: stop.signal });
    const waiting = r.wait(30_000);
    stop.abort(new Error('stopped'));
    await expect(waiting).rejects.toThrow();
  });
});
