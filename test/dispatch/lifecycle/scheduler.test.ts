// The leg scheduler in-process: legs are promises the test settles, the service a map of items.
// Order, --parallel, blockers and every way of stopping the legs (docs/dispatch.md), without agents.
import { describe, expect, it } from 'vitest';
import type { WorkItemDetail } from '../../../src/contract/types.js';
import type { LegOutcome } from '../../../src/dispatch/lifecycle/leg.js';
import type { LegContext } from '../../../src/dispatch/leg-context.js';
import { LegScheduler } from '../../../src/dispatch/lifecycle/scheduler.js';
import type { DispatchDeps, DispatchOptions } from '../../../src/dispatch/lifecycle/types.js';
import type { SelectedCard, Selection } from '../../../src/dispatch/select/types.js';

/** Only what the scheduler reads of an item. */
function item(key: string, over: Partial<WorkItemDetail> = {}): WorkItemDetail {
  return { key, title: `title of ${key}`, parentKey: null, archivedAt: null, links: { blockedBy: [] }, ...over } as unknown as WorkItemDetail;
}

function card(key: string, over: Partial<SelectedCard> = {}): SelectedCard {
  return { key, title: `title of ${key}`, item: item(key), skipReason: null, after: [], gatedBy: null, ...over };
}

function selection(cards: SelectedCard[]): Selection {
  return { command: 'run', originalCommand: 'run', cards, scopeKey: null, mode: 'implement', closeOut: false, capped: false, empty: false, note: '' };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

/** A scheduler whose legs end when the test says, and whose service answers from `items`. */
function setup(cards: SelectedCard[], over: Partial<DispatchOptions> = {}, items = new Map<string, WorkItemDetail | null>()) {
  const lines: string[] = [];
  const started: string[] = [];
  const ends = new Map<string, (implemented: boolean, costUsd?: number) => void>();
  const controller = new AbortController();
  let reads = 0;
  let onRead: (key: string) => void = () => {};
  const deps = {
    service: {
      getWorkItem: async (key: string) => {
        reads++;
        onRead(key);
        // null: the item was deleted (or moved out of the project) since the open.
        const found = items.has(key) ? items.get(key) : cards.find((c) => c.key === key)?.item;
        if (!found) throw Object.assign(new Error('not found'), { status: 404 });
        return found;
      },
    },
    output: { info: (m: string) => lines.push(m), warn: (m: string) => lines.push(`warn: ${m}`) },
    clock: { now: () => 0 },
    stateDir: '/nonexistent',
  } as unknown as DispatchDeps;
  // Reconcile (re-reading running legs' items) has tests of its own: reconcile.test.ts.
  const opts = { parallel: 1, onFailure: 'halt', maxCostUsd: null, reconcile: false, ...over } as DispatchOptions;
  const legs: LegScheduler = new LegScheduler({
    opts,
    deps,
    selection: selection(cards),
    signal: controller.signal,
    runCardLeg: (_ctx, fresh) =>
      new Promise<LegOutcome>((resolve) => {
        started.push(fresh.key);
        ends.set(fresh.key, (implemented, costUsd = 0) =>
          resolve({
            implemented,
            summary: {
              key: fresh.key,
              title: fresh.title,
              disposition: implemented ? 'implemented' : 'failed',
              durationMs: 0,
              exitCode: 0,
              reason: null,
              costUsd,
              tokens: { in: null, out: null },
              sessionBranch: null,
            },
          }),
        );
      }),
  });
  const end = async (key: string, implemented = true, costUsd?: number) => {
    ends.get(key)!(implemented, costUsd);
    await settle();
  };
  const run = legs.run({} as LegContext);
  return {
    legs,
    run,
    started,
    lines,
    end,
    controller,
    reads: () => reads,
    onRead: (f: (key: string) => void) => (onRead = f),
  };
}

describe('LegScheduler', () => {
  it('starts legs in card order, never more than --parallel at once, and reports them in card order', async () => {
    const t = setup(
      ['A', 'B', 'C', 'D'].map((k) => card(k)),
      { parallel: 2 },
    );
    await settle();
    expect(t.started).toEqual(['A', 'B']);
    await t.end('B');
    expect(t.started).toEqual(['A', 'B', 'C']);
    await t.end('C');
    expect(t.started).toEqual(['A', 'B', 'C', 'D']);
    await t.end('D');
    await t.end('A');
    await t.run;
    expect(t.legs.legs.map((l) => l.key)).toEqual(['A', 'B', 'C', 'D']);
    expect([...t.legs.landed]).toEqual(['B', 'C', 'D', 'A']);
    expect(t.legs.stop).toBeNull();
  });

  it('starts a card after its blockers in the set, and not at all when a blocker failed', async () => {
    const t = setup([card('A'), card('B', { after: ['A'] }), card('C')], { parallel: 3, onFailure: 'continue' });
    await settle();
    // B waits on A, and C waits behind B: cards start in their order.
    expect(t.started).toEqual(['A']);
    await t.end('A', false);
    expect(t.started).toEqual(['A', 'C']);
    expect(t.lines).toContain('warn: B not started: its blocker A did not land');
    await t.end('C');
    await t.run;
    expect([...t.legs.failed]).toEqual(['A']);
    expect(t.legs.stop).toBeNull();
  });

  it('a failed leg under --on-failure halt stops the run halted: no new leg starts', async () => {
    const t = setup([card('A'), card('B')]);
    await settle();
    await t.end('A', false);
    await t.run;
    expect(t.started).toEqual(['A']);
    expect(t.legs.stop).toBe('halted');
  });

  it('stops gated at a card a human card of the set blocks', async () => {
    const t = setup([card('A'), card('B', { gatedBy: 'H' }), card('C')]);
    await settle();
    await t.end('A');
    await t.run;
    expect(t.started).toEqual(['A']);
    expect(t.legs.stop).toBe('gated');
    expect(t.lines).toContain('B waits on H (executor: human): stopping gated');
  });

  it('stops replanned when the item changed since the open, or can no longer be read', async () => {
    const archived = setup([card('A'), card('B')], {}, new Map([['A', item('A', { archivedAt: '2026-11-01T00:00:00Z' })]]));
    await archived.run;
    expect(archived.started).toEqual([]);
    expect(archived.legs.stop).toBe('replanned');
    expect(archived.lines).toContain('A was archived: stopping replanned');

    const gone = setup([card('A'), card('Z')], {}, new Map([['Z', null]]));
    await settle();
    await gone.end('A');
    await gone.run;
    expect(gone.started).toEqual(['A']);
    expect(gone.legs.stop).toBe('replanned');
    expect(gone.lines).toContain('Z can no longer be read: stopping replanned');
  });

  it('stops max once the reported spend reaches --max-cost, counting running legs as they report', async () => {
    const t = setup([card('A'), card('B'), card('C')], { parallel: 2, maxCostUsd: 1 });
    await settle();
    t.legs.onSpend('A', 0.6);
    expect(t.legs.stop).toBeNull();
    t.legs.onSpend('B', 0.5);
    expect(t.legs.stop).toBe('max');
    await t.end('A', true, 0.6);
    await t.end('B', true, 0.5);
    await t.run;
    expect(t.started).toEqual(['A', 'B']);
    expect(t.lines).toContain('reported spend $1.10 reached --max-cost: no new legs, stopping max');
  });

  it('starts nothing more once the run is aborted (signal, timeout, a close by the service)', async () => {
    const t = setup([card('A'), card('B')]);
    await settle();
    t.controller.abort(new Error('SIGINT'));
    await t.end('A', false);
    await t.run;
    expect(t.started).toEqual(['A']);
    // A leg that failed because the run was stopped is no --on-failure halt.
    expect(t.legs.stop).toBeNull();
    expect(t.legs.halted()).toBe(true);
  });

  it('a read that fails past the retries rejects the run; settle waits for the legs still running', async () => {
    const t = setup([card('A'), card('B')], { parallel: 2 });
    t.onRead((key) => {
      if (key === 'B') throw new Error('service unreachable');
    });
    await expect(t.run).rejects.toThrow('service unreachable');
    expect(t.started).toEqual(['A']);
    let settled = false;
    void t.legs.settle().then(() => (settled = true));
    await settle();
    expect(settled).toBe(false);
    await t.end('A');
    expect(settled).toBe(true);
  });
});

describe('LegScheduler: a stop that lands while the next item is re-read', () => {
  it('SIGINT during the read: that leg does not start (docs/dispatch.md: no new leg starts)', async () => {
    const t = setup([card('A'), card('B')]);
    t.onRead((key) => {
      if (key === 'B') t.controller.abort(new Error('SIGINT'));
    });
    await settle();
    await t.end('A');
    await t.run;
    expect(t.started).toEqual(['A']);
  });

  it('a failed leg halts the run during the read: the halt stands, even when the item also changed', async () => {
    const items = new Map([['C', item('C', { archivedAt: '2026-11-01T00:00:00Z' })]]);
    const t = setup([card('A'), card('B'), card('C')], { parallel: 2 }, items);
    await settle();
    expect(t.started).toEqual(['A', 'B']);
    t.onRead((key) => {
      // A fails (under --on-failure halt) while C is being read.
      if (key === 'C') void t.end('A', false);
    });
    await t.end('B');
    await t.run;
    expect(t.started).toEqual(['A', 'B']);
    expect(t.legs.stop).toBe('halted');
  });
});
