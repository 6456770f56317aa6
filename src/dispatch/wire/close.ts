// Closing a run (closeDispatchRun) the way the event stream appends: the close is not repeated blindly by the
// client, so after an ambiguous failure (a reset after sending, an answer cut short, a gateway's
// 500/502/504) the run is read (getDispatchRun) to learn whether the close landed. Closed: done. Still
// running: close again, a few times with backoff. A 409 then means it closed meanwhile (our lost
// close, or someone else's): read it. Only a service that stays unreachable leaves the run open,
// for `svc runs recover`.
import { DEFAULT_MAX_WAIT_MS, Retrier, type Pacing } from '../../api/retry.js';
import type { CloseStatus, DispatchRun, StopReason } from '../../contract/types.js';
import { isRunClosed, serviceErrorOf, type DispatchService } from '../ports.js';

export interface CloseRequest {
  stopReason: StopReason;
  status: CloseStatus;
}

/**
 * `closed`: the run is closed with our close (this attempt's answer, or a lost answer the read
 * confirmed). `closed-elsewhere`: the service closed it otherwise (the reaper, another client);
 * `run` is its state when it could be read.
 */
export type CloseResult = { kind: 'closed'; run: DispatchRun } | { kind: 'closed-elsewhere'; run: DispatchRun | null };

export interface CloseOptions {
  /** Closes sent after the first one that failed ambiguously (default 5). */
  maxRetries?: number;
  /** --max-wait: give up resolving after this long, the client's own retries included. */
  giveUpAfterMs?: number;
  retryBaseMs?: number;
  retryMaxMs?: number;
  warn?(message: string): void;
  random?(): number;
  /** The waits between closes and their clock; tests record them instead of sleeping. */
  pacing?: Partial<Pick<Pacing, 'sleep' | 'now'>>;
}

const matches = (run: DispatchRun, close: CloseRequest): boolean => run.stopReason === close.stopReason && run.status === close.status;

/**
 * Closes `runId` with `close`, resolving ambiguity by reading the run. Throws the last error when
 * the close cannot be settled (a refusal such as a 422, or the service unreachable past the
 * client's max-wait): the run then stays open for `svc runs recover`.
 */
export async function closeRun(
  service: Pick<DispatchService, 'closeDispatchRun' | 'getDispatchRun'>,
  runId: string,
  close: CloseRequest,
  options: CloseOptions = {},
): Promise<CloseResult> {
  const maxRetries = options.maxRetries ?? 5;
  // Every wait of the close, the client's own retries of each call included, draws on one budget.
  const retrier = new Retrier({
    maxWaitMs: options.giveUpAfterMs ?? DEFAULT_MAX_WAIT_MS,
    backoff: { baseMs: options.retryBaseMs ?? 250, maxMs: options.retryMaxMs ?? 10_000 },
    pacing: { ...options.pacing, ...(options.random ? { random: options.random } : {}) },
  });
  const { budget } = retrier;
  let uncertain = false;
  for (;;) {
    try {
      return { kind: 'closed', run: await service.closeDispatchRun(runId, close, { budget }) };
    } catch (error) {
      if (isRunClosed(error)) {
        if (!uncertain) return { kind: 'closed-elsewhere', run: await service.getDispatchRun(runId, { budget }).catch(() => null) };
        // Closed meanwhile: most likely by our own close whose answer was lost. The read says.
        const run = await service.getDispatchRun(runId, { budget });
        return matches(run, close) ? { kind: 'closed', run } : { kind: 'closed-elsewhere', run };
      }
      // A refusal, or a fault the client already retried past max-wait (503, 429, refused): the
      // close did not land and asking again now would not help.
      if (!serviceErrorOf(error).ambiguous) throw error;
      uncertain = true;
      // The close may or may not have landed: the run says. (A read that fails past the client's
      // own retries throws: the service is unreachable, the run is left for recover.)
      const run = await service.getDispatchRun(runId, { budget });
      if (run.status !== 'running') return matches(run, close) ? { kind: 'closed', run } : { kind: 'closed-elsewhere', run };
      const delayMs = retrier.backoff();
      if (retrier.attempt > maxRetries || !budget.allows(delayMs)) throw error;
      options.warn?.(`close of run ${runId} did not land (${serviceErrorOf(error).message ?? 'no answer'}); closing again`);
      await retrier.wait(delayMs);
    }
  }
}
