// The one retry helper of svc: every loop that tries again (the transport's policy loop, the event
// stream's batches, the heartbeat, the close, GitHub's rate limits, git's auth retry) waits
// through a Retrier, so backoff, jitter, the injected clock and sleep, and --max-wait are decided
// here once. Loops that nest (the event stream calling the transport, which retries on its own)
// share one budget: the inner waits count against the outer one, so a run's stream cannot wait
// --max-wait in the transport and then --max-wait again on top of it.
import { setTimeout as delay } from 'node:timers/promises';

/** The longest wait for a rate limit or an unavailable service (README.md#configuration `--max-wait`). */
export const DEFAULT_MAX_WAIT_MS = 5 * 60_000;

/** How a loop waits: injectable, so tests record waits instead of sleeping. */
export interface Pacing {
  /** Must reject when `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** Epoch ms. */
  now(): number;
  /** Uniform in [0, 1). */
  random(): number;
}

export const realPacing: Pacing = {
  sleep: (ms, signal) => delay(ms, undefined, signal ? { signal } : undefined),
  now: () => Date.now(),
  random: () => Math.random(),
};

/**
 * A budget of waiting. It counts the time since it began when given a clock (an outage lasts as
 * long as the calls inside it take, not only the sleeps between them), and never less than the
 * waits it recorded (an injected sleep does not move the clock). Without a clock only the recorded
 * waits count: a budget shared by calls far apart in time (GitHub's rate limits over a whole run).
 */
export class WaitBudget {
  private slept = 0;
  private readonly startedAt: number;

  constructor(
    readonly maxWaitMs: number,
    private readonly now?: () => number,
    /** The budget of the loop around this one: what is waited here is waited there too. */
    private readonly outer?: WaitBudget,
  ) {
    this.startedAt = now?.() ?? 0;
  }

  /** Time already counted against the budget. */
  get waitedMs(): number {
    return Math.max(this.slept, this.now ? this.now() - this.startedAt : 0);
  }

  /** What is left to wait here and in every loop around this one. */
  get leftMs(): number {
    const own = this.maxWaitMs - this.waitedMs;
    return this.outer ? Math.min(own, this.outer.leftMs) : own;
  }

  allows(ms: number): boolean {
    return ms <= this.leftMs;
  }

  record(ms: number): void {
    this.slept += ms;
    this.outer?.record(ms);
  }
}

/** Exponential backoff: the ceiling doubles per attempt from `baseMs` up to `maxMs`. */
export interface BackoffShape {
  baseMs: number;
  maxMs: number;
}

/**
 * Exponential backoff with full jitter: uniform in [0, min(max, base * 2^(attempt-1))). Full
 * jitter spreads the clients an outage stopped together the most (several machines share a queue).
 */
export function backoff(attempt: number, shape: BackoffShape, random: () => number): number {
  const ceiling = Math.min(shape.maxMs, shape.baseMs * 2 ** Math.min(attempt - 1, 30));
  return Math.floor(random() * ceiling);
}

export interface RetrierOptions {
  /** --max-wait for this loop; default 5 minutes. Infinity: only the outer budget bounds it. */
  maxWaitMs?: number;
  /** The loop this one runs inside of, if any. */
  outer?: WaitBudget;
  backoff?: BackoffShape;
  pacing?: Partial<Pacing>;
  /** Aborts a wait (the wait rejects with the signal's reason). */
  signal?: AbortSignal;
  /** False: only recorded waits count against the budget, not the time the attempts take. */
  countElapsed?: boolean;
}

/** One loop's retrying: which attempt it is, what it may still wait, and the wait itself. */
export class Retrier {
  /** 1-based number of the attempt being made (or that just failed). */
  attempt = 1;
  readonly budget: WaitBudget;
  readonly pacing: Pacing;
  private readonly shape: BackoffShape;
  private readonly signal: AbortSignal | undefined;

  constructor(opts: RetrierOptions = {}) {
    this.pacing = { ...realPacing, ...opts.pacing };
    this.shape = opts.backoff ?? { baseMs: 250, maxMs: 20_000 };
    this.signal = opts.signal;
    const now = opts.countElapsed === false ? undefined : this.pacing.now;
    this.budget = new WaitBudget(opts.maxWaitMs ?? DEFAULT_MAX_WAIT_MS, now, opts.outer);
  }

  /** The backoff after the attempt that just failed. */
  backoff(): number {
    return backoff(this.attempt, this.shape, this.pacing.random);
  }

  /**
   * Waits `ms` before the next attempt and counts it. Resolves false at once, without waiting, when
   * the wait would pass the budget: the caller gives up with its last error.
   */
  async wait(ms: number): Promise<boolean> {
    if (!this.budget.allows(ms)) return false;
    await this.pacing.sleep(ms, this.signal);
    this.budget.record(ms);
    this.attempt++;
    return true;
  }
}

/**
 * Runs `fn` until it succeeds, or until `decide` answers null (no retry: the error is rethrown) or
 * the wait it asks for would pass the budget. `decide` may throw to end the loop with another error.
 */
export async function retry<T>(
  fn: (attempt: number) => Promise<T>,
  decide: (error: unknown, r: Retrier) => number | null | Promise<number | null>,
  r: Retrier = new Retrier(),
): Promise<T> {
  for (;;) {
    try {
      return await fn(r.attempt);
    } catch (error) {
      const delayMs = await decide(error, r);
      if (delayMs === null || !(await r.wait(delayMs))) throw error;
    }
  }
}
