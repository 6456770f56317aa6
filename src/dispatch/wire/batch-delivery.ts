// One batch of the event stream delivered exactly once: retried within one wait budget, and after
// an ambiguous failure (a request that may or may not have been stored) only the rest is resent,
// as the run's seq says. The stream (event-stream.ts) decides when a batch goes; this, how.
import { Retrier, retry, type Pacing, type WaitBudget } from '../../api/retry.js';
import type { DispatchEventInput } from '../../contract/types.js';
import type { EncodedEntry, Journal } from './journal.js';
import { RunClosedError, isRetryable, isRunClosed, serviceErrorOf, type DispatchService } from '../ports.js';

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

export class BatchDelivery {
  private readonly o: BatchDeliveryOptions;
  private baseSeq: number;
  /** The buffer appends are encoded into, grown to the largest batch. */
  private body: Buffer = Buffer.alloc(0);

  constructor(options: BatchDeliveryOptions) {
    this.o = options;
    this.baseSeq = options.baseSeq;
  }

  /**
   * Delivers one batch exactly once: retries, and after an ambiguous failure resends only the rest.
   * Every wait of the batch, the client's own retries of each call included, draws on one budget
   * (--max-wait): the stream never waits a max-wait of its own on top of the client's.
   */
  async send(batch: EncodedEntry[], running: () => boolean): Promise<void> {
    let rest = batch;
    const retrier = this.retrier();
    const { budget } = retrier;
    while (rest.length > 0) {
      try {
        this.o.stats.appends++;
        const answer = await this.append(rest, budget);
        const last = rest[rest.length - 1]!;
        if (answer.seq !== this.baseSeq + last.n) {
          // Someone else appended to this run; keep our mapping true from here on.
          this.o.warn?.(`run ${this.o.runId}: seq ${answer.seq} after local event ${last.n}, expected ${this.baseSeq + last.n}`);
          this.baseSeq = answer.seq - last.n;
        }
        this.o.journal.ack(last.n, answer.seq);
        return;
      } catch (error) {
        if (isRunClosed(error)) throw new RunClosedError(this.o.runId, error);
        const fault = serviceErrorOf(error);
        if (!fault.ambiguous && !isRetryable(error)) throw error;
        if (fault.ambiguous) {
          // The batch may have been stored, whole or not at all: the run's seq says which.
          this.o.stats.ambiguousRecoveries++;
          const stored = await this.storedOf(rest, budget);
          if (stored > 0) {
            const done = rest[stored - 1]!;
            this.o.journal.ack(done.n, this.baseSeq + done.n);
            rest = rest.slice(stored);
            if (rest.length === 0) return;
          }
        }
        // Stopped or closed meanwhile: what is left stays in the journal for recovery.
        if (!running()) return;
        if (!(await retrier.wait(retrier.backoff()))) throw error;
      }
    }
  }

  /**
   * One append of `entries`. A service that takes the body encoded gets the journal's own bytes,
   * so no event is decoded or encoded again on its way (and the batch stays off the JS heap).
   */
  private append(entries: EncodedEntry[], budget: WaitBudget) {
    const { service, runId } = this.o;
    if (service.appendEncodedEvents) {
      const body = encodeEvents(entries, this.body);
      // A new buffer is exactly this batch's size: kept for the batches after it.
      if (body.buffer !== this.body.buffer) this.body = body;
      return service.appendEncodedEvents(runId, body, { budget });
    }
    return service.appendDispatchEvents(runId, { events: entries.map((e) => JSON.parse(e.json.toString('utf8')) as DispatchEventInput) }, { budget });
  }

  /** How many of `rest` the service has stored, read from the run's seq (getDispatchRun). */
  private storedOf(rest: EncodedEntry[], budget: WaitBudget): Promise<number> {
    const before = this.baseSeq + rest[0]!.n - 1;
    return retry(
      async () => {
        const run = await this.o.service.getDispatchRun(this.o.runId, { budget });
        const stored = run.seq - before;
        if (stored < 0 || stored > rest.length) {
          this.o.warn?.(`run ${this.o.runId}: seq ${run.seq} outside the batch sent (${before}..${before + rest.length})`);
        }
        const clamped = Math.max(0, Math.min(rest.length, stored));
        // A closed run stores nothing more; what it holds is what it has.
        if (run.status !== 'running' && clamped < rest.length) throw new RunClosedError(this.o.runId);
        return clamped;
      },
      (error, r) => (error instanceof RunClosedError || !isRetryable(error) ? null : r.backoff()),
      this.retrier(budget),
    );
  }

  /** A retry loop of this batch: its backoff, its clock, inside `outer` when given (else --max-wait). */
  private retrier(outer?: WaitBudget): Retrier {
    return new Retrier({
      maxWaitMs: outer ? Infinity : this.o.giveUpAfterMs,
      ...(outer ? { outer } : {}),
      backoff: { baseMs: this.o.retryBaseMs, maxMs: this.o.retryMaxMs },
      pacing: { ...this.o.pacing, random: this.o.random },
    });
  }
}

const EVENTS_OPEN = Buffer.from('{"events":[');
const EVENTS_CLOSE = Buffer.from(']}');

/**
 * The body of appendDispatchEvents, `{"events":[…]}`, from the events' JSON bytes, written into `into` when it
 * is large enough (the stream reuses one buffer: a batch is sent only after the last one settled).
 */
export function encodeEvents(entries: readonly EncodedEntry[], into?: Buffer): Buffer {
  let size = EVENTS_OPEN.length + EVENTS_CLOSE.length + Math.max(0, entries.length - 1);
  for (const e of entries) size += e.json.length;
  const out = into && into.length >= size ? into : Buffer.allocUnsafeSlow(size);
  let at = EVENTS_OPEN.copy(out, 0);
  entries.forEach((e, i) => {
    if (i > 0) at = out.writeUInt8(0x2c, at);
    at += e.json.copy(out, at);
  });
  EVENTS_CLOSE.copy(out, at);
  return out.subarray(0, size);
}
