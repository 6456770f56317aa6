// The heartbeat of a local run: on its own timer from open to close, so a busy agent (or a busy
// event stream) never starves it. A failed beat is retried within seconds; a 409 means the run was
// closed under us (the reaper, another client): beating stops for good and the run ends locally.
import { RunClosedError, isRunClosed, type DispatchService } from './ports.js';

export interface HeartbeatOptions {
  service: Pick<DispatchService, 'heartbeatDispatchRun'>;
  runId: string;
  /** Between beats (DISPATCH §2: default 60 s). */
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
  let timer: NodeJS.Timeout | null = null;
  let inFlight: Promise<void> | null = null;
  let stopped = false;
  // Since when beats have been failing (null while they succeed).
  let failingSince: number | null = null;

  const schedule = (ms: number): void => {
    if (stopped) return;
    timer = setTimeout(() => {
      timer = null;
      inFlight = beat().finally(() => {
        inFlight = null;
      });
    }, ms);
  };

  const beat = async (): Promise<void> => {
    try {
      await options.service.heartbeatDispatchRun(options.runId);
      failingSince = null;
      stats.beats++;
      schedule(options.intervalMs);
    } catch (error) {
      stats.failures++;
      if (isRunClosed(error)) {
        // Never retried: the run is over on the service's side.
        stopped = true;
        options.onClosed(new RunClosedError(options.runId, error));
        return;
      }
      failingSince ??= Date.now();
      if (options.giveUpAfterMs !== undefined && Date.now() - failingSince >= options.giveUpAfterMs) {
        stopped = true;
        options.warn?.(`heartbeat failed for longer than --max-wait (${describe(error)}); giving up on the service`);
        options.onFailed?.(error);
        return;
      }
      options.warn?.(`heartbeat failed (${describe(error)}); retrying in ${retryMs < 1000 ? `${retryMs}ms` : `${Math.round(retryMs / 1000)}s`}`);
      schedule(retryMs);
    }
  };

  schedule(options.intervalMs);
  return {
    stats,
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = null;
      await inFlight;
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
