// The leg scheduler: starts a run's legs in card order, up to `--parallel` at once, a card only
// once its blockers in the set landed, and stops starting them when the run must stop (a human
// gate, a changed plan, a failed leg under `--on-failure halt`, `--max-cost`, or the run's signal).
// It owns the legs' bookkeeping; the executor reads the result when it closes the run.
import type { StopReason, WorkItemDetail } from '../../contract/types.js';
import { branchFor } from '../git/run-git.js';
import { openBlockerKeys } from '../select/checks.js';
import { pushedOnOrigin } from '../select/prior-work.js';
import type { SelectedCard, Selection } from '../select/types.js';
import { serviceErrorOf, type LegSummary } from '../ports.js';
import { Slots, type Release } from '../slots.js';
import { describeFsError, stateFolderFault } from '../state/folder.js';
import { attemptsOf } from './attempts.js';
import { runCardLeg, type LegOutcome } from './leg.js';
import { Reconciler } from './reconcile.js';
import type { LegContext } from '../leg-context.js';
import type { DispatchDeps, DispatchOptions } from './types.js';

/** Why the item no longer matches the plan the run opened with, or null. */
export function replanReason(before: WorkItemDetail, now: WorkItemDetail, doneStatuses?: readonly string[]): string | null {
  if (now.archivedAt && !before.archivedAt) return `${now.key} was archived`;
  if (now.parentKey !== before.parentKey) return `${now.key} was re-parented (${before.parentKey ?? 'none'} → ${now.parentKey ?? 'none'})`;
  const had = new Set(openBlockerKeys(before, doneStatuses));
  const gained = openBlockerKeys(now, doneStatuses).filter((k) => !had.has(k));
  if (gained.length > 0) return `${now.key} gained an open blocker: ${gained.join(', ')}`;
  return null;
}

export class LegScheduler {
  /** The cards this invocation runs: not skipped, not landed in an earlier attempt. */
  readonly todo: SelectedCard[];
  /** Cards implemented, in this run or (resumed) before it. */
  readonly landed: Set<string>;
  readonly failed = new Set<string>();
  private stopReason: StopReason | null = null;
  private readonly summaries: LegSummary[] = [];
  /** Finished legs' reported spend, and running legs' so far. */
  private spent = 0;
  private readonly spending = new Map<string, number>();
  private readonly running = new Map<string, Promise<void>>();
  private readonly reconciled = new Set<string>();
  private readonly reconciler: Reconciler | null;

  private readonly opts: DispatchOptions;
  private readonly deps: DispatchDeps;
  private readonly signal: AbortSignal;
  private readonly runCardLeg: typeof runCardLeg;

  constructor(input: {
    opts: DispatchOptions;
    deps: DispatchDeps;
    selection: Selection;
    /** Aborted when no new leg may start and running agents must stop. */
    signal: AbortSignal;
    /** Cards implemented before this invocation (a resumed run). */
    landed?: Iterable<string>;
    /** One leg (default runCardLeg). */
    runCardLeg?: typeof runCardLeg;
  }) {
    this.opts = input.opts;
    this.deps = input.deps;
    this.signal = input.signal;
    this.runCardLeg = input.runCardLeg ?? runCardLeg;
    this.landed = new Set(input.landed);
    const { reconcile } = this.opts;
    this.reconciler =
      reconcile === false
        ? null
        : new Reconciler({
            service: this.deps.service,
            intervalMs: this.opts.heartbeatIntervalMs,
            ...(reconcile?.floorMs !== undefined ? { floorMs: reconcile.floorMs } : {}),
            scopeKey: input.selection.scopeKey,
            ...(this.opts.doneStatuses ? { doneStatuses: this.opts.doneStatuses } : {}),
            now: () => this.deps.clock.now(),
          });
    this.todo = input.selection.cards.filter((c) => !c.skipReason && !this.landed.has(c.key));
  }

  /** What stopped the legs early (gated, replanned, halted, max), or null. */
  get stop(): StopReason | null {
    return this.stopReason;
  }

  /** Whether no new leg may start. */
  halted(): boolean {
    return this.stopReason !== null || this.signal.aborted;
  }

  /** The legs that ran, in card order (parallel legs end in any order). */
  get legs(): LegSummary[] {
    const order = (key: string) => this.todo.findIndex((c) => c.key === key);
    return [...this.summaries].sort((a, b) => order(a.key) - order(b.key));
  }

  /** A running leg's spend so far: checked on every report, so parallel legs cannot each overshoot the cap. */
  onSpend(key: string, usd: number): void {
    this.spending.set(key, usd);
    this.checkCost();
  }

  /**
   * Runs the legs. A read that fails past the client's retries rejects; the legs already running
   * go on until `settle()` (the caller aborts them first).
   */
  async run(ctx: LegContext): Promise<void> {
    const slots = new Slots(this.opts.parallel);
    let index = 0;
    for (const card of this.todo) {
      if (this.halted()) break;
      if (card.gatedBy) {
        this.deps.output.info(`${card.key} waits on ${card.gatedBy} (executor: human): stopping gated`);
        this.stopReason = 'gated';
        break;
      }
      await Promise.all(card.after.map((k) => this.running.get(k)));
      // Held from here: the checks before the leg count against --parallel as the leg does.
      const release = await this.acquire(slots, ctx, card.key);
      let started = false;
      try {
        if (this.halted()) break;
        const unmet = card.after.find((k) => !this.landed.has(k));
        if (unmet) {
          this.deps.output.warn(`${card.key} not started: its blocker ${unmet} did not land`);
          continue;
        }
        const fresh = await this.reread(card);
        // A stop that landed during the read (a signal, a failed leg, --max-cost) stands: no new leg.
        if (!fresh || this.halted()) break;
        index++;
        this.start({ ...ctx, slots: release.held }, card, fresh, index, release);
        started = true;
      } finally {
        if (!started) release();
      }
    }
    await Promise.all(this.running.values());
    this.reconciler?.close();
  }

  /**
   * The slots a card's leg holds: one, or for best-of-N as many as its attempts, up to --parallel
   * (taken one by one: only this loop takes slots, so two cards never wait on each other's).
   */
  private async acquire(slots: Slots, ctx: LegContext, key: string): Promise<Release & { held: number }> {
    const want = Math.min(attemptsOf(ctx, key), this.opts.parallel);
    const held: Release[] = [await slots.acquire()];
    while (held.length < want) held.push(await slots.acquire());
    return Object.assign(() => held.forEach((r) => r()), { held: held.length });
  }

  /** Waits for the legs still running, however they end. */
  async settle(): Promise<void> {
    await Promise.allSettled(this.running.values());
    this.reconciler?.close();
  }

  /** The item as it is now, or null when the plan changed (the run stops `replanned`). */
  private async reread(card: SelectedCard): Promise<WorkItemDetail | null> {
    // An item that can no longer be read (deleted, moved out of the project) is a changed plan too.
    // Origin is asked beside the read, not after it: both come after the open, which is what the
    // question needs, and a leg starts one round trip sooner.
    const [fresh, pushed] = await Promise.all([
      this.deps.service.getWorkItem(card.key).catch((error: unknown) => {
        if (serviceErrorOf(error).status === 404) return null;
        throw error;
      }),
      this.pushedMeanwhile(card.key),
    ]);
    const why = fresh ? (replanReason(card.item, fresh, this.opts.doneStatuses) ?? pushed) : `${card.key} can no longer be read`;
    if (!why && fresh) return fresh;
    if (this.stopReason === null) {
      this.deps.output.info(`${why}: stopping replanned`);
      this.stopReason = 'replanned';
    }
    return null;
  }

  /**
   * Lane commands: another machine's run may have pushed the card's work and closed between our
   * selection and our open (no 409 then said so): origin's branch is asked once more, for this card.
   */
  private async pushedMeanwhile(key: string): Promise<string | null> {
    const { command, rerun, repo, baseRef } = this.opts;
    if (rerun || (command !== 'next' && command !== 'batch' && command !== 'auto')) return null;
    return (await pushedOnOrigin(repo, key, baseRef ?? 'HEAD')) ? `${key} was implemented on origin/${branchFor(key)} meanwhile` : null;
  }

  private start(runCtx: LegContext, card: SelectedCard, fresh: WorkItemDetail, index: number, release: () => void): void {
    const started = this.deps.clock.now();
    const ctx = this.reconciler ? this.stoppable(runCtx, card.key, fresh, this.reconciler) : runCtx;
    // runCardLeg settles every agent failure itself; what still rejects is local (a full disk
    // refusing even the failed disposition): the card is shown failed with that cause.
    const outcome = this.runCardLeg(ctx, fresh, index, this.todo.length).catch(
      (error: unknown): LegOutcome => ({
        implemented: false,
        summary: {
          key: card.key,
          title: fresh.title,
          disposition: 'failed',
          durationMs: this.deps.clock.now() - started,
          exitCode: null,
          reason: stateFolderFault(error, this.deps.stateDir)?.message ?? describeFsError(error),
          costUsd: null,
          tokens: { in: null, out: null },
          sessionBranch: null,
        },
      }),
    );
    const leg = outcome
      .then((o) => this.ended(card.key, o))
      .finally(() => {
        this.reconciler?.untrack(card.key);
        this.running.delete(card.key);
        release();
      });
    this.running.set(card.key, leg);
  }

  /** The leg's own stop: its item closed, archived, handed to a human or moved out of scope. */
  private stoppable(runCtx: LegContext, key: string, fresh: WorkItemDetail, reconciler: Reconciler): LegContext {
    const stop = new AbortController();
    let stoppedBy: string | null = null;
    reconciler.track(fresh, (reason) => {
      stoppedBy = reason;
      this.reconciled.add(key);
      this.deps.output.warn(`${key}: ${reason}: stopping its agent; what it committed stays on its branch`);
      stop.abort(new Error(reason));
    });
    return { ...runCtx, signal: AbortSignal.any([runCtx.signal, stop.signal]), stoppedBy: () => stoppedBy };
  }

  private ended(key: string, outcome: LegOutcome): void {
    this.summaries.push(outcome.summary);
    this.spending.delete(key);
    this.spent += outcome.summary.costUsd ?? 0;
    if (outcome.implemented) this.landed.add(key);
    else {
      this.failed.add(key);
      // A leg a person's change stopped is not the agent's failure: the run goes on with the next card.
      if (this.opts.onFailure === 'halt' && !this.signal.aborted && !this.reconciled.has(key)) this.stopReason ??= 'halted';
    }
    this.checkCost();
  }

  private checkCost(): void {
    if (this.opts.maxCostUsd == null) return;
    const total = this.spent + [...this.spending.values()].reduce((a, b) => a + b, 0);
    if (total < this.opts.maxCostUsd) return;
    if (this.stopReason === null) this.deps.output.info(`reported spend $${total.toFixed(2)} reached --max-cost: no new legs, stopping max`);
    this.stopReason ??= 'max';
  }
}
