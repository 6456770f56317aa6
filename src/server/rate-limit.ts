// A fixed-window rate limit per bucket (a token id, or the client address for requests that carry
// no valid token). Remaining counts down to 0 on the last allowed request; the next one is refused,
// so a client always sees Remaining: 0 before its first 429.

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Unix epoch seconds when the window resets. */
  resetEpochSeconds: number;
}

export class RateLimiter {
  private readonly windows = new Map<string, { start: number; used: number }>();

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
  ) {}

  /** Counts one request against `bucket` at `nowMs` and says whether it may proceed. */
  take(bucket: string, nowMs: number): RateDecision {
    let w = this.windows.get(bucket);
    // Windows are aligned to the epoch so every bucket's reset time is predictable.
    const start = Math.floor(nowMs / this.windowMs) * this.windowMs;
    if (!w || w.start !== start) {
      w = { start, used: 0 };
      this.windows.set(bucket, w);
      if (this.windows.size > 10_000) this.prune(start);
    }
    const resetEpochSeconds = Math.ceil((start + this.windowMs) / 1000);
    if (w.used >= this.limit) return { allowed: false, limit: this.limit, remaining: 0, resetEpochSeconds };
    w.used += 1;
    return { allowed: true, limit: this.limit, remaining: this.limit - w.used, resetEpochSeconds };
  }

  private prune(currentStart: number): void {
    for (const [k, v] of this.windows) if (v.start !== currentStart) this.windows.delete(k);
  }
}
