// Card selection per command against the real local service (listWorkItems, getWorkItem, listReadyBugs, listReadyContainers through the client).
import { describe, expect, it } from 'vitest';
import { selectCards, SelectionError, readyLeavesFilter } from '../../../src/dispatch/select/index.js';
import { engineEachTest } from '../../support/engine.js';

const h = engineEachTest();

const sel = (command: Parameters<typeof selectCards>[0]['command'], keys: string[] = [], extra = {}) =>
  selectCards({ command, projectKey: h.svc.projectKey, keys, ...extra }, { service: h.service });
const view = (cards: { key: string; skipReason: string | null; gatedBy: string | null }[]) =>
  cards.map((c) => [c.key, c.skipReason ? c.skipReason.split(' ')[0] : c.gatedBy ? `gated:${c.gatedBy}` : 'run']);

describe('run_scope', () => {
  it('takes every live leaf in tree order, blockers first, and records skips', async () => {
    const story = h.item('story', 'S');
    const a = h.item('subtask', 'A', { parentKey: story });
    const b = h.item('subtask', 'B', { parentKey: story });
    const done = h.item('subtask', 'done one', { parentKey: story, status: 'done' });
    const outside = h.item('task', 'outside blocker');
    const blockedOutside = h.item('subtask', 'blocked outside', { parentKey: story, blockedBy: [outside] });
    const human = h.item('subtask', 'human', { parentKey: story, executor: 'human' });
    const afterHuman = h.item('subtask', 'after human', { parentKey: story, blockedBy: [human] });
    h.item('subtask', 'archived', { parentKey: story, archived: true });
    h.svc.admin.addLink(b, a, 'blocks'); // B blocks A: A runs after B
    const s = await sel('run_scope', [story]);
    expect(s.scopeKey).toBe(story);
    expect(s.closeOut).toBe(true);
    expect(view(s.cards)).toEqual([
      [b, 'run'],
      [a, 'run'],
      [done, 'done'],
      [blockedOutside, 'blocked'],
      [human, 'executor:'],
      [afterHuman, `gated:${human}`],
    ]);
    expect(s.cards.find((c) => c.key === a)!.after).toEqual([b]);
  });

  it('skips a leaf whose in-set blocker is skipped, and breaks blocker cycles', async () => {
    const story = h.item('story', 'S');
    const x = h.item('subtask', 'X', { parentKey: story });
    const y = h.item('subtask', 'Y', { parentKey: story, blockedBy: [x] });
    h.svc.admin.addLink(y, x, 'blocks');
    const outside = h.item('task', 'outside');
    const z = h.item('subtask', 'Z', { parentKey: story, blockedBy: [outside] });
    const w = h.item('subtask', 'W', { parentKey: story, blockedBy: [z] });
    const s = await sel('run_scope', [story]);
    const reasons = Object.fromEntries(s.cards.map((c) => [c.key, c.skipReason]));
    expect(reasons[x]).toMatch(/cycle/);
    expect(reasons[y]).toMatch(/cycle/);
    expect(reasons[z]).toMatch(/blocked by/);
    expect(reasons[w]).toBe(`blocked by ${z}, which is skipped`);
    expect(s.empty).toBe(true);
  });
});

describe('named commands', () => {
  it('run keeps exactly the named order and records done and human cards', async () => {
    const a = h.item('task', 'A');
    const b = h.item('task', 'B', { status: 'cancelled' });
    const c = h.item('task', 'C', { executor: 'human' });
    const d = h.item('task', 'D', { blockedBy: [c] });
    const s = await sel('run', [d, a, b, c]);
    expect(view(s.cards)).toEqual([
      [d, `gated:${c}`],
      [a, 'run'],
      [b, 'done'],
      [c, 'executor:'],
    ]);
    expect(s.scopeKey).toBeNull();
  });

  it('rejects malformed and repeated keys before reading anything', async () => {
    await expect(sel('run', ['nope'])).rejects.toBeInstanceOf(SelectionError);
    const a = h.item('task', 'A');
    await expect(sel('run', [a, a])).rejects.toThrow(/twice/);
  });

  it('fix takes items whose delivery fails CI; review those with an open delivery', async () => {
    const pr = (state: string, ci: string | null) => ({
      repo: 'o/r',
      number: 1,
      title: 't',
      url: 'https://x/1',
      state,
      ci,
      baseRef: 'main',
      defaultBranch: 'main',
    });
    const failing = h.item('task', 'failing', { deliveries: [pr('open', 'failing')] });
    const passing = h.item('task', 'passing', { deliveries: [pr('open', 'passing')] });
    const merged = h.item('task', 'merged', { deliveries: [pr('merged', null)] });
    const fix = await sel('fix', [failing, passing]);
    expect(view(fix.cards)).toEqual([
      [failing, 'run'],
      [passing, 'no'],
    ]);
    expect(fix.mode).toBe('fix');
    const review = await sel('review', [passing, merged]);
    expect(view(review.cards)).toEqual([
      [passing, 'run'],
      [merged, 'no'],
    ]);
    expect(review.mode).toBe('review');
  });
});

describe('lanes', () => {
  it('batch takes the ready leaves up to max and says whether the cap cut the set', async () => {
    const story = h.item('story', 'S');
    const a = h.item('subtask', 'A', { parentKey: story });
    const b = h.item('subtask', 'B', { parentKey: story, priority: 'high' });
    const c = h.item('task', 'C');
    h.item('task', 'blocked', { blockedBy: [c] });
    h.item('bug', 'a bug');
    const all = await sel('batch');
    expect(all.cards.map((x) => x.key)).toEqual([a, b, c]);
    expect(all.capped).toBe(false);
    const two = await sel('batch', [], { max: 2 });
    expect(two.cards.map((x) => x.key)).toEqual([a, b]);
    expect(two.capped).toBe(true);
    const high = await sel('batch', [], { lanes: { priority: ['high', 'highest'] } });
    expect(high.cards.map((x) => x.key)).toEqual([b]);
    const excluded = await sel('batch', [], { exclude: new Set([a]) });
    expect(excluded.cards.map((x) => x.key)).toEqual([b, c]);
  });

  it('builds the filter with lane clauses, quoting where needed', () => {
    expect(readyLeavesFilter({ kind: ['task'], ancestor: ['P-1'], assignee: 'me', sprint: 'active' })).toBe(
      'ready:true leaf:true bugwork:false kind:task ancestor:P-1 assignee:me sprint:active',
    );
    expect(readyLeavesFilter({ assignee: 'a b' })).toContain('assignee:"a b"');
  });

  it('next takes the first runnable container as run_scope, else the first bug group, else nothing', async () => {
    expect((await sel('next')).empty).toBe(true);
    const bug = h.item('bug', 'a bug');
    const viaBug = await sel('next');
    expect(viaBug.cards.map((c) => c.key)).toEqual([bug]);
    expect(viaBug.scopeKey).toBe(bug);
    const story = h.item('story', 'S', { priority: 'highest' });
    const t = h.item('subtask', 'T', { parentKey: story });
    const viaContainer = await sel('next');
    expect(viaContainer.command).toBe('next');
    expect(viaContainer.scopeKey).toBe(story);
    expect(viaContainer.cards.map((c) => c.key)).toEqual([t]);
    expect(viaContainer.closeOut).toBe(true);
  });
});
