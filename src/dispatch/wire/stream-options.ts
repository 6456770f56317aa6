// What the run's event stream (event-stream.ts) is made with: the stream's options as callers give
// them, and what its delivery of one batch takes from them.
import type { Pacing } from '../../api/retry.js';
import type { Journal } from './journal.js';
import type { DispatchService, RunClosedError } from '../ports.js';

export interface EventStreamOptions {
  service: Pick<DispatchService, 'appendDispatchEvents' | 'appendEncodedEvents' | 'getDispatchRun'>;
  runId: string;
  journal: Journal;
  /** The run's seq before local event 1 (0 for a fresh run): local n is stored as seq baseSeq + n. */
  baseSeq: number;
  /** Flush pending events at least this often (default 1 s). */
  flushIntervalMs?: number;
  /** Events per append (at most the contract's 200). */
  maxBatch?: number;
  /** Soft cap on a batch's journal bytes (a journal line is larger than its event on the wire), so
   * 200 × 16 KiB bodies never make a 3 MiB request that a service's body limit refuses. */
  maxBatchBytes?: number;
  /** Backoff between retries of a batch (full jitter below a doubling ceiling). */
  retryBaseMs?: number;
  retryMaxMs?: number;
  /**
   * --max-wait: a batch that cannot be delivered within it (the client's own retries included)
   * fails the stream.
   */
  giveUpAfterMs?: number;
  /** The waits between retries and their clock; tests record them instead of sleeping. */
  pacing?: Partial<Pick<Pacing, 'sleep' | 'now'>>;
  /** The run was closed under us (409): the caller ends the run locally. */
  onClosed?(error: RunClosedError): void;
  /** The stream cannot deliver (a 4xx other than 409, or the service gone past giveUpAfterMs). */
  onFailed?(error: unknown): void;
  warn?(message: string): void;
  random?(): number;
}

export interface BatchDeliveryOptions {
  service: Pick<DispatchService, 'appendDispatchEvents' | 'appendEncodedEvents' | 'getDispatchRun'>;
  runId: string;
  journal: Journal;
  baseSeq: number;
  giveUpAfterMs: number;
  retryBaseMs: number;
  retryMaxMs: number;
  pacing: Partial<Pick<Pacing, 'sleep' | 'now'>>;
  random(): number;
  warn?(message: string): void;
  /** Appends made and ambiguous answers recovered, counted into the stream's stats. */
  stats: { appends: number; ambiguousRecoveries: number };
}
