// `auto --per-run N` (a fleet worker's flag): each of its runs takes at most N cards and it comes
// back for more, so N workers share a backlog instead of the first one taking it whole. Each card
// runs once; runs close `completed` while more is ready, the last one `drained`.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { runDispatch } from '../../../src/dispatch/lifecycle/dispatch.js';
import { startHarness, type Harness } from '../../support/engine.js';
import { inRepoWorktree, instantAgent } from './instant-agent.js';

let h: Harness;
beforeEach(async () => {
  h = await startHarness();
});
afterEach(async () => {
  vi.restoreAllMocks();
  await h.close();
});

describe('auto --per-run', () => {
  it('opens runs of at most N cards until nothing is ready', async () => {
    const keys = Array.from({ length: 5 }, (_, i) => h.item('task', `leaf ${i + 1}`));
    const s = await runDispatch(
      h.opts({ command: 'auto', perRun: 2, allowEmpty: true }),
      h.deps({ runAgentProcess: instantAgent, prepareWorktree: inRepoWorktree }),
    );
    expect(s.runs?.map((r) => [r.cards.length, r.stopReason])).toEqual([
      [2, 'completed'],
      [2, 'completed'],
      [1, 'drained'],
    ]);
    expect(s.legs.map((l) => l.key).sort()).toEqual([...keys].sort());
    expect(s.legs.map((l) => l.disposition)).toEqual(Array(5).fill('implemented'));
  });

  it('each round starts at a random place among the ready cards, so workers do not all reach for the first', async () => {
    const keys = Array.from({ length: 4 }, (_, i) => h.item('task', `leaf ${i + 1}`));
    // 0.99 of 4 candidates: the last one first, then (3 left) the last of those.
    vi.spyOn(Math, 'random').mockReturnValue(0.99);
    const s = await runDispatch(
      h.opts({ command: 'auto', perRun: 1, allowEmpty: true }),
      h.deps({ runAgentProcess: instantAgent, prepareWorktree: inRepoWorktree }),
    );
    expect(s.legs.map((l) => l.key)).toEqual([...keys].reverse());
    // Without --per-run, the service's order stands.
    for (const k of keys) h.svc.admin.setStatus(k, 'todo');
    const dry = await runDispatch(h.opts({ command: 'batch', dryRun: true, rerun: true }), h.deps());
    expect(dry.cards.map((c) => c.key)).toEqual(keys);
  });

  it('with --max, the cap still ends the invocation `max`', async () => {
    for (let i = 0; i < 5; i++) h.item('task', `leaf ${i + 1}`);
    const s = await runDispatch(
      h.opts({ command: 'auto', perRun: 2, maxCards: 3, allowEmpty: true }),
      h.deps({ runAgentProcess: instantAgent, prepareWorktree: inRepoWorktree }),
    );
    expect(s.runs?.map((r) => [r.cards.length, r.stopReason])).toEqual([
      [2, 'completed'],
      [1, 'max'],
    ]);
  });

  it('a round reselects past every card other runs hold, from its one listing, to the free one', async () => {
    const held = Array.from({ length: 7 }, (_, i) => h.item('task', `held ${i + 1}`));
    const free = h.item('task', 'free');
    // Another machine's live run holds the first seven, where the round starts (random 0): each
    // open of ours meets a 409 naming one.
    await h.service.openDispatchRun({ projectKey: h.svc.projectKey, command: 'batch', idempotencyKey: 'other', cards: held.map((k) => ({ workItemKey: k })) });
    vi.spyOn(Math, 'random').mockReturnValue(0);
    const deps = h.deps({ runAgentProcess: instantAgent, prepareWorktree: inRepoWorktree });
    const listings = vi.spyOn(deps.service, 'listWorkItems');
    const s = await runDispatch(h.opts({ command: 'auto', perRun: 1, allowEmpty: true }), deps);
    expect(s.exitCode).toBe(0);
    expect(s.legs.map((l) => [l.key, l.disposition])).toEqual([[free, 'implemented']]);
    expect(h.seen.filter((l) => / is in run \S+ \(running\): reselecting without /.test(l))).toHaveLength(7);
    // The round's listing, and the "is more ready?" check's after the free card's leg: a cap on
    // the reselections would have listed the backlog again for the cards past it.
    expect(listings).toHaveBeenCalledTimes(2);
  });
});
