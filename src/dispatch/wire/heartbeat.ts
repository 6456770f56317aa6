// The heartbeat of a local run: on its own timer from open to close, so a busy agent (or a busy
// event stream) never starves it. A failed beat is retried within seconds; a 409 means the run was
// closed under us (the reaper, another client): beating stops for good and the run ends locally.
import { realPacing, Retrier, retry, type Pacing } from '../../api/retry.js';
import { RunClosedError, isRunClosed, type DispatchService } from '../ports.js';

export interface HeartbeatOptions {
  service: Pick<DispatchService, 'heartbeatDispatchRun'>;
  runId: string;
  /** Between beats (README.md#configuration: default 60 s). */
  intervalMs: number;
  /** After a failed beat, the next try comes this soon (capped by the interval). */
  retryMs?: number;
  onClosed(error: RunClosedError): void;
  /**
   * Beats have failed for longer than this (`--max-wait`): the service is given up on, beating
   * stops and `onFailed` hears the last error. Default: never.
   */
  giveUpAfterMs?: number;
  onFailed?(error: unknown): void;
  warn?(message: string): void;
  /** The waits between beats and their clock; tests record them instead of sleeping. */
  pacing?: Partial<Pick<Pacing, 'sleep' | 'now'>>;
}

export interface Heartbeat {
  /** Beats made that the service recorded, and failures (for tests and diagnostics). */
  readonly stats: { beats: number; failures: number };
  /** Stops the timer and waits for a beat in flight. */
  stop(): Promise<void>;
}

export function startHeartbeat(options: HeartbeatOptions): Heartbeat {
  const retryMs = Math.min(options.retryMs ?? 5_000, options.intervalMs);
  const stats = { beats: 0, failures: 0 };
  // Aborts the wait between beats (and between retries) when the run ends.
  const stopping = new AbortController();
  const pacing: Pacing = { ...realPacing, ...options.pacing };

  /** One beat, retried every `retryMs` while the outage lasts less than --max-wait. */
  const beat = (): Promise<void> => {
    // The outage's budget: the client's own retries of each beat count against it too.
    const outage = new Retrier({ maxWaitMs: options.giveUpAfterMs ?? Infinity, pacing, signal: stopping.signal });
    return retry(
      () => options.service.heartbeatDispatchRun(options.runId, { budget: outage.budget }),
      (error) => {
        stats.failures++;
        // A 409 is never retried: the run is over on the service's side.
        if (isRunClosed(error) || stopping.signal.aborted) return null;
        if (!outage.budget.allows(retryMs)) {
          options.warn?.(`heartbeat failed for longer than --max-wait (${describe(error)}); giving up on the service`);
          return null;
        }
        options.warn?.(`heartbeat failed (${describe(error)}); retrying in ${retryMs < 1000 ? `${retryMs}ms` : `${Math.round(retryMs / 1000)}s`}`);
        return retryMs;
      },
      outage,
    );
  };

  const loop = async (): Promise<void> => {
    try {
      for (;;) {
        await pacing.sleep(options.intervalMs, stopping.signal);
        await beat();
        stats.beats++;
      }
    } catch (error) {
      if (isRunClosed(error)) options.onClosed(new RunClosedError(options.runId, error));
      // Unless stopped (a wait cut short, a beat that failed as the run ended): the service is gone.
      else if (!stopping.signal.aborted) options.onFailed?.(error);
    }
  };

  const running = loop();
  return {
    stats,
    async stop() {
      stopping.abort();
      await running;
    },
  };
}

function describe(error: unknown): string {
  if (typeof error === 'object' && error !== null) {
    const e = error as { status?: unknown; code?: unknown; message?: unknown };
    return [e.status, e.code, e.message].filter((x) => x !== undefined && x !== null && x !== 0).join(' ') || 'error';
  }
  return String(error);
}
