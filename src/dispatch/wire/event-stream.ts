// The run's one ordered event stream (buildkite's log streamer, adapted): events go to the journal
// first, then to the service in batches of at most 200, flushed on an interval or when a batch is
// full, one append in flight at a time. The pending backlog lives in the journal, read back a batch
// at a time, so memory stays bounded however much the agent prints and however slow the service is.
// EventStream decides when a batch goes; BatchDelivery, below, how: exactly once, retried within one
// wait budget, and after an ambiguous failure (a request that may or may not have been stored) only
// the rest is resent, as the run's seq says.
import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULT_MAX_WAIT_MS, Retrier, retry, type WaitBudget } from '../../api/retry.js';
import { EVENTS_PER_APPEND, type DispatchEventInput } from '../../contract/types.js';
import { encodeEvents, type EncodedEntry, type JournalReader } from './journal-reader.js';
import type { BatchDeliveryOptions, EventStreamOptions } from './stream-options.js';
import { RunClosedError, isRetryable, isRunClosed, serviceErrorOf } from '../ports.js';

type State = 'running' | 'closed' | 'failed' | 'stopped';

/**
 * A disposition waits at most this long after the previous append instead of the flush interval:
 * a leg's start and end reach the service within it (the live page times legs by their arrival),
 * while a run of many instant legs still sends at most four appends a second, not two per leg (that
 * tripled the per-card overhead of the 100-card bench).
 */
const URGENT_GAP_MS = 250;

export class EventStream {
  private readonly o: Required<Omit<EventStreamOptions, 'onClosed' | 'onFailed' | 'warn'>> & Pick<EventStreamOptions, 'onClosed' | 'onFailed' | 'warn'>;
  private readonly reader: JournalReader;
  private state: State = 'running';
  private readonly delivery: BatchDelivery;
  /** The batch being sent (the only events held in memory), as the journal's bytes. */
  private batch: EncodedEntry[] = [];
  private wake: (() => void) | null = null;
  /** Producers that gather events between ticks (an agent's output pipe): see `gather`. */
  private readonly gatherers = new Set<() => void>();
  private flushWanted = false;
  /** A disposition is pending: the next batch goes without waiting for the interval (once). */
  private urgent = false;
  /** When the last batch was read for sending (the urgent gap counts from it). */
  private lastSendAt = 0;
  private loop: Promise<void>;
  private error: unknown = null;
  /** Appends made, and the largest batch ever held in memory (for tests and `--debug`). */
  readonly stats = { appends: 0, maxHeld: 0, ambiguousRecoveries: 0 };

  constructor(options: EventStreamOptions) {
    this.o = {
      flushIntervalMs: 1000,
      maxBatch: EVENTS_PER_APPEND,
      maxBatchBytes: 512 * 1024,
      retryBaseMs: 250,
      retryMaxMs: 15_000,
      giveUpAfterMs: DEFAULT_MAX_WAIT_MS,
      random: Math.random,
      pacing: {},
      ...options,
    };
    this.o.maxBatch = Math.min(Math.max(1, this.o.maxBatch), EVENTS_PER_APPEND);
    this.delivery = new BatchDelivery({ ...this.o, stats: this.stats });
    this.reader = options.journal.reader(options.journal.ackedN);
    this.loop = this.run();
  }

  /** Events written to the journal but not yet acknowledged by the service. */
  get pending(): number {
    return this.o.journal.lastN - this.o.journal.ackedN;
  }

  /** Why the stream stopped delivering, if it did: a RunClosedError or the failure. */
  get failure(): unknown {
    return this.error;
  }

  get isClosed(): boolean {
    return this.state === 'closed';
  }

  /**
   * Journals the event (synchronously, so call order is stream order) and schedules its sending.
   * After the run was closed the event is still journalled for the local record, never sent.
   */
  push(ev: DispatchEventInput): number {
    return this.pushAll([ev]);
  }

  /** `push` of several events in one journal write; returns the local number of the last. */
  pushAll(evs: readonly DispatchEventInput[]): number {
    let n: number;
    try {
      n = this.o.journal.appendAll(evs);
    } catch (error) {
      // An event that cannot be journalled cannot be sent (the journal comes first): the run must
      // stop. What the journal already holds is still delivered.
      this.o.onFailed?.(error);
      throw error;
    }
    // A disposition goes out soon (see URGENT_GAP_MS): the service times legs by when it hears of
    // them (the live page's durations).
    if (evs.some((ev) => ev.disposition !== undefined)) {
      this.urgent = true;
      this.poke();
    } else if (this.pending >= this.o.maxBatch) this.poke();
    return n;
  }

  /**
   * A producer that gathers output into events (an agent's output pipe) is asked to hand over what
   * it holds at each of the stream's ticks, just before a batch is read: its text waits one
   * interval in all, not one of its own and then the stream's. Returns the way to leave.
   */
  gather(flush: () => void): () => void {
    this.gatherers.add(flush);
    return () => this.gatherers.delete(flush);
  }

  /** The interval passed: what the producers gathered becomes events now (pushed, journalled). */
  private tick(): void {
    for (const flush of this.gatherers) {
      try {
        flush();
      } catch {
        // An event that could not be journalled was reported by push (onFailed); the loop goes
        // on delivering what the journal holds, as after a failed push from the agent's output.
      }
    }
  }

  /** Sends everything pending; resolves true once all is acknowledged, false on timeout or failure. */
  async flush(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (this.pending > 0 && this.state === 'running') {
      this.flushWanted = true;
      this.poke();
      const left = deadline - Date.now();
      if (left <= 0) return false;
      await sleep(Math.min(left, 20));
    }
    return this.pending === 0;
  }

  /** Stops the loop (after the in-flight append settles); pending events stay in the journal. */
  async stop(): Promise<void> {
    if (this.state === 'running') this.state = 'stopped';
    this.poke();
    await this.loop;
  }

  private poke(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  /** Waits for a poke or `ms`, whichever comes first; true when the time ran out (a tick). */
  private nap(ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.wake = null;
        resolve(true);
      }, ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve(false);
      };
    });
  }

  private async run(): Promise<void> {
    while (this.state === 'running') {
      if (this.pending === 0) {
        this.flushWanted = false;
        const ticked = await this.nap(this.o.flushIntervalMs);
        if (this.state !== 'running') break;
        if (ticked) this.tick();
        // What the producers handed over has waited its interval: it goes now.
        if (this.pending === 0 || !ticked) continue;
      } else if (this.pending < this.o.maxBatch && !this.flushWanted) {
        // Let a partial batch gather for one interval unless a flush was asked for or it is full.
        const wait = this.urgent ? this.lastSendAt + URGENT_GAP_MS - Date.now() : this.o.flushIntervalMs;
        if (wait > 0) {
          const ticked = await this.nap(wait);
          if (this.state !== 'running') break;
          if (ticked) this.tick();
          // A poke (another disposition, a full batch, a flush) asks again what to wait for.
          if (this.urgent && this.pending < this.o.maxBatch && !this.flushWanted && this.lastSendAt + URGENT_GAP_MS > Date.now()) continue;
        }
      }
      this.urgent = false;
      this.lastSendAt = Date.now();
      this.batch = this.reader.readEncoded(this.o.maxBatch, this.o.maxBatchBytes);
      this.stats.maxHeld = Math.max(this.stats.maxHeld, this.batch.length);
      if (this.batch.length === 0) {
        // Counters say pending but the file holds nothing newer: a torn write. Nothing to send.
        this.o.warn?.('event journal ends before its counters; waiting for new events');
        await this.nap(this.o.flushIntervalMs);
        continue;
      }
      try {
        await this.delivery.send(this.batch, () => this.state === 'running');
      } catch (error) {
        this.fail(error);
      }
      this.batch = [];
    }
  }

  private fail(error: unknown): void {
    if (this.state !== 'running' && this.state !== 'stopped') return;
    this.error = error;
    if (error instanceof RunClosedError) {
      this.state = 'closed';
      this.o.onClosed?.(error);
    } else {
      this.state = 'failed';
      this.o.onFailed?.(error);
    }
  }
}

class BatchDelivery {
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
