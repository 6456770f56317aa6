// The run's one ordered event stream (buildkite's log streamer, adapted): events go to the journal
// first, then to the service in batches of at most 200, flushed on an interval or when a batch is
// full, one append in flight at a time. The pending backlog lives in the journal, read back a batch
// at a time, so memory stays bounded however much the agent prints and however slow the service is.
import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULT_MAX_WAIT_MS, type Pacing } from '../../api/retry.js';
import { BatchDelivery } from './batch-delivery.js';
import { EVENTS_PER_APPEND, type DispatchEventInput } from '../../contract/types.js';
import type { EncodedEntry, Journal, JournalReader } from './journal.js';
import { RunClosedError, type DispatchService } from '../ports.js';

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

export { encodeEvents } from './batch-delivery.js';
