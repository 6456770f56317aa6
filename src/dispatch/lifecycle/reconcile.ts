// A person's change wins over a running leg (docs/dispatch.md, "Reconcile"): while legs run, their
// items are read again at the heartbeat's cadence, all in one tick and never one card more often
// than the floor; an item that was closed, archived, handed to a human or moved out of the run's
// scope stops its leg. A read that fails (a slow or gone service, a rate limit) stops nothing: the
// next tick tries again. The reads wait for nothing (no retry, no rate-limit wait), so they never
// hold a leg, a heartbeat or the close.
import type { WorkItemDetail } from '../../contract/types.js';
import { WaitBudget } from '../../api/retry.js';
import type { DispatchService } from '../ports.js';
import { isDone } from '../select/checks.js';

/** At most one read of a card this often, whatever the heartbeat's interval. */
export const RECONCILE_FLOOR_MS = 30_000;

/** Why `now` means the leg that started on `then` must stop, or null. */
export function reconcileReason(then: WorkItemDetail, now: WorkItemDetail, scopeKey: string | null, doneStatuses?: readonly string[]): string | null {
  if (now.archivedAt && !then.archivedAt) return 'archived';
  if (isDone(now, doneStatuses) && !isDone(then, doneStatuses)) return 'closed on the service';
  if (now.executor === 'human' && then.executor !== 'human') return 'now for a human';
  const beneath = (item: WorkItemDetail) => scopeKey !== null && (item.ancestorKeys ?? []).includes(scopeKey);
  if (beneath(then) && !beneath(now)) return 'moved out of scope';
  return null;
}

interface Tracked {
  item: WorkItemDetail;
  stop(reason: string): void;
  readAt: number;
}

export interface ReconcileOptions {
  service: Pick<DispatchService, 'getWorkItem' | 'readWorkItem'>;
  /** The tick: the heartbeat's interval. */
  intervalMs: number;
  /** No card is read more often than this (default RECONCILE_FLOOR_MS). */
  floorMs?: number;
  scopeKey: string | null;
  doneStatuses?: readonly string[];
  now(): number;
}

/** The running legs' items, read again each tick; `stop` is called once for a leg whose item changed. */
export class Reconciler {
  private readonly legs = new Map<string, Tracked>();
  private timer: NodeJS.Timeout | null = null;
  private reading = false;

  constructor(private readonly opts: ReconcileOptions) {}

  /** A leg starts on `item`; `stop` ends it with the reason. */
  track(item: WorkItemDetail, stop: (reason: string) => void): void {
    this.legs.set(item.key, { item, stop, readAt: this.opts.now() });
    if (!this.timer) {
      this.timer = setInterval(() => void this.tick(), this.opts.intervalMs);
      this.timer.unref();
    }
  }

  untrack(key: string): void {
    this.legs.delete(key);
    if (this.legs.size === 0) this.close();
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** One pass over the legs due for a read (exported for a test that drives it without waiting). */
  async tick(): Promise<void> {
    if (this.reading) return;
    this.reading = true;
    try {
      const floor = this.opts.floorMs ?? RECONCILE_FLOOR_MS;
      for (const [key, leg] of [...this.legs]) {
        if (this.opts.now() - leg.readAt < floor) continue;
        leg.readAt = this.opts.now();
        const { service } = this.opts;
        const read = service.readWorkItem ? service.readWorkItem(key, { budget: new WaitBudget(0) }).then((r) => r.item) : service.getWorkItem(key);
        const now = await read.catch(() => null);
        // The leg may have ended during the read.
        if (!now || this.legs.get(key) !== leg) continue;
        const why = reconcileReason(leg.item, now, this.opts.scopeKey, this.opts.doneStatuses);
        if (!why) continue;
        this.legs.delete(key);
        leg.stop(why);
      }
    } finally {
      this.reading = false;
    }
  }
}
