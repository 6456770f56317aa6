// The retry policy of docs/dispatch.md#the-wire as a pure function, so each rule can be read (and tested) apart
// from the transport: given what one attempt ended with, decide whether and how long to wait. The
// waiting itself (budget, sleep, clock) is the Retrier's (src/api/retry.ts).
import type { ApiError } from './errors.js';
import { backoff as jitteredBackoff, DEFAULT_MAX_WAIT_MS } from './retry.js';

export interface RetryTuning {
  /** Longest total time a call may spend waiting between attempts (README.md#configuration `--max-wait`). */
  maxWaitMs: number;
  /** First backoff ceiling; doubles per retry (full jitter picks uniformly below it). */
  baseDelayMs: number;
  /** Largest single backoff ceiling. */
  maxDelayMs: number;
  /** Retries of a 500, for reads only. */
  maxServerErrorRetries: number;
  /** Uniform [0, 1): injectable so tests are deterministic. */
  random(): number;
}

export const DEFAULT_TUNING: Omit<RetryTuning, 'random'> = {
  maxWaitMs: DEFAULT_MAX_WAIT_MS,
  baseDelayMs: 250,
  maxDelayMs: 20_000,
  maxServerErrorRetries: 3,
};

export interface AttemptState {
  /** 1-based number of the attempt that just failed. */
  attempt: number;
  /** Time already spent waiting in this call, ms. */
  waitedMs: number;
  /** How many 500s this call has already retried. */
  serverErrorRetries: number;
  /** Now, epoch ms (for the 429 reset). */
  nowMs: number;
  /**
   * Whether the operation may be sent again even if the failed attempt might have been applied:
   * reads, the open (idempotencyKey) and the heartbeat.
   */
  repeatable: boolean;
  method: string;
}

export type RetryDecision = { retry: true; delayMs: number; reason: string } | { retry: false };

/** Decides what to do after a failed attempt. Never waits past `maxWaitMs` in total. */
export function decideRetry(error: ApiError, state: AttemptState, tuning: RetryTuning): RetryDecision {
  const budget = tuning.maxWaitMs - state.waitedMs;
  const within = (delayMs: number, reason: string): RetryDecision => (delayMs <= budget ? { retry: true, delayMs, reason } : { retry: false });

  if (error.status === 429) {
    // Wait until the window resets. A reset already past (clock skew, second granularity) still
    // waits a little so a burst of 429s cannot spin. When the reset lies beyond what is left of
    // max-wait we give up at once: waiting and then failing anyway helps nobody.
    if (error.rateLimitReset !== null) {
      const untilReset = error.rateLimitReset * 1000 - state.nowMs;
      return within(Math.max(untilReset, 0) + 50 + Math.floor(tuning.random() * 200), 'rate limited');
    }
    return within(backoff(state.attempt, tuning), 'rate limited (no reset header)');
  }

  // A second chance is only safe when repeating cannot apply the request twice: the operation is
  // repeatable, or this failure proves the first attempt did nothing.
  const safe = state.repeatable || !error.ambiguous;

  if (error.status === 0 || (error.fault !== null && error.status < 400)) {
    return safe ? within(backoff(state.attempt, tuning), `network fault (${error.fault})`) : { retry: false };
  }
  if (error.status === 502 || error.status === 503 || error.status === 504) {
    return safe ? within(backoff(state.attempt, tuning), `HTTP ${error.status}`) : { retry: false };
  }
  if (error.status === 500) {
    // An unexpected fault is retried a few times for reads only: a write that hit a bug would
    // likely hit it again, and might have been applied.
    if (state.method !== 'GET' || state.serverErrorRetries >= tuning.maxServerErrorRetries) return { retry: false };
    return within(backoff(state.attempt, tuning), 'HTTP 500');
  }
  // 401, 403, 404, 409, 412, 422 and every other status: the answer will not change by asking again.
  return { retry: false };
}

/** The helper's one backoff (full jitter, src/api/retry.ts) with the transport's knobs. */
function backoff(attempt: number, tuning: RetryTuning): number {
  return jitteredBackoff(attempt, { baseMs: tuning.baseDelayMs, maxMs: tuning.maxDelayMs }, tuning.random);
}
