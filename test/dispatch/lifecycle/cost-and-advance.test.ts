// --max-cost is refused for agents that report no spend and is checked as the stream reports it;
// work advances: next/batch/auto skip cards an earlier run implemented (or with an open delivery).
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { checkMaxCost, runDispatch } from '../../../src/dispatch/lifecycle/dispatch.js';
import { headRefOf } from '../../../src/dispatch/git/delivery.js';
import { run } from '../../support/cli.js';
import { engineEachTest } from '../../support/engine.js';

const h = engineEachTest();

const SPEND = resolve(import.meta.dirname, '../../fixtures/agents/spend.mjs');

describe('--max-cost', () => {
  it.each([
    ['aider', { agent: 'aider' }],
    ['codex (tokens, no price)', { agent: 'codex' }],
    ['--agent-cmd without --agent-format', { agentCmd: 'true' }],
    ['--agent-cmd with a format that has no price', { agentCmd: 'true', stream: 'gemini-stream-json' as const }],
  ])('is refused (exit 2) for %s', (_name, agent) => {
    // The command checks it before anything is contacted (test/commands/dispatch/dispatch-flags.test.ts: nothing opens).
    const err = (() => {
      try {
        checkMaxCost({ agent, maxCostUsd: 1 });
      } catch (error) {
        return error;
      }
    })();
    expect(err).toMatchObject({ exitCode: 2 });
    expect((err as Error).message).toMatch(/^--max-cost needs an agent that reports its spend/);
    expect(() => checkMaxCost({ agent, maxCostUsd: null })).not.toThrow();
  });

  it('is checked while a leg runs: crossed mid-leg, no new leg starts and the running one finishes', async () => {
    const [a, b, c] = [h.item('task', 'A'), h.item('task', 'B'), h.item('task', 'C')];
    // A reports $1 and keeps working; B ends only once svc has said the cost is reached, and A
    // only once B has ended: B's slot is free while A still runs, which is where C would start.
    const [slowGate, fastGate] = [join(h.stateDir, 'slow-gate'), join(h.stateDir, 'fast-gate')];
    const dispatched = runDispatch(
      h.opts({
        keys: [a, b, c],
        parallel: 2,
        allowEmpty: true,
        maxCostUsd: 0.5,
        agent: { agentCmd: `"${process.execPath}" ${SPEND}`, stream: 'claude-stream-json' },
        env: { PATH: process.env.PATH, SLOW_KEY: a, SLOW_GATE: slowGate, FAST_GATE: fastGate },
        agentEnv: ['SLOW_KEY', 'SLOW_GATE', 'FAST_GATE'],
      }),
      h.deps(),
    );
    try {
      await vi.waitUntil(() => h.seen.some((l) => l.includes('reached --max-cost')), { timeout: 20_000, interval: 10 });
      writeFileSync(fastGate, '');
      await vi.waitUntil(() => h.seen.includes(`end ${b} implemented`), { timeout: 20_000, interval: 10 });
    } finally {
      // On a failed wait too, so the agents end and the run closes before the harness does.
      writeFileSync(fastGate, '');
      writeFileSync(slowGate, '');
    }
    const s = await dispatched;
    // Without the mid-leg check C would have started in B's slot.
    expect(s.legs.map((l) => [l.key, l.disposition])).toEqual([
      [a, 'implemented'],
      [b, 'implemented'],
    ]);
    expect(s).toMatchObject({ stopReason: 'max', status: 'succeeded' });
    const run = await h.service.getDispatchRun(s.runId!);
    expect(run.cards.find((x) => x.workItemKey === c)?.disposition).toBe('not_reached');
    const stopAt = h.seen.findIndex((l) => l.includes('reached --max-cost'));
    expect(stopAt).toBeGreaterThan(-1);
    expect(stopAt).toBeLessThan(h.seen.indexOf(`end ${a} implemented`));
  });
});

describe('work advances', () => {
  it('batch skips cards an earlier run implemented while svc/KEY holds that work; --rerun picks them', async () => {
    const [a, b] = [h.item('task', 'A'), h.item('task', 'B')];
    const first = await runDispatch(h.opts({ command: 'batch' }), h.deps());
    expect(first.legs.map((l) => l.disposition)).toEqual(['implemented', 'implemented']);
    // The legs recorded themselves in_review (record-implementation.test.ts); this is the local
    // check beneath that, for a service that did not take the record: the items are todo again.
    for (const k of [a, b]) h.svc.admin.setStatus(k, 'todo');
    const again = await runDispatch(h.opts({ command: 'batch' }), h.deps());
    expect(again.runId).toBeNull();
    expect(again.cards.map((c) => [c.key, c.skipReason])).toEqual([
      [a, `implemented in run ${first.runId} on svc/${a}`],
      [b, `implemented in run ${first.runId} on svc/${b}`],
    ]);
    const dry = await runDispatch(h.opts({ command: 'batch', dryRun: true, rerun: true }), h.deps());
    expect(dry.cards.map((c) => c.skipReason)).toEqual([null, null]);
  });

  it('a card whose branch was deleted or merged into the base is picked again', async () => {
    const [a, b] = [h.item('task', 'A'), h.item('task', 'B')];
    await runDispatch(h.opts({ command: 'batch' }), h.deps());
    for (const k of [a, b]) h.svc.admin.setStatus(k, 'todo'); // as above: the local check alone
    await run(
      'git',
      [
        'worktree',
        'remove',
        '--force',
        (await run('git', ['worktree', 'list', '--porcelain'], h.repo))
          .split('\n')
          .find((l) => l.endsWith(`/${a}`))!
          .slice(9),
      ],
      h.repo,
    );
    await run('git', ['branch', '-D', `svc/${a}`], h.repo);
    await run('git', ['merge', '-q', '--ff-only', `svc/${b}`], h.repo);
    const dry = await runDispatch(h.opts({ command: 'batch', dryRun: true }), h.deps());
    expect(dry.cards.map((c) => [c.key, c.skipReason])).toEqual([
      [a, null],
      [b, null],
    ]);
  });

  it('a card with an open delivery is skipped by next, batch and auto', async () => {
    const a = h.item('task', 'A', {
      deliveries: [
        { repo: 'acme/shop', number: 3, title: 'PR', url: 'https://x.test/acme/shop/pull/3', state: 'open', ci: null, baseRef: 'main', defaultBranch: 'main' },
      ],
    });
    for (const command of ['batch', 'auto'] as const) {
      const s = await runDispatch(h.opts({ command, dryRun: true }), h.deps());
      expect(s.cards.map((c) => [c.key, c.skipReason])).toEqual([[a, 'has an open delivery (acme/shop#3)']]);
    }
    const story = h.item('story', 'S');
    const sub = h.item('subtask', 'sub', {
      parentKey: story,
      deliveries: [{ repo: 'acme/shop', number: 4, title: 'PR', url: 'u', state: 'open', ci: null, baseRef: null, defaultBranch: 'main' }],
    });
    const free = h.item('subtask', 'free', { parentKey: story });
    h.svc.admin.addLink(sub, free, 'blocks');
    // The skipped card's work exists: the card waiting on it inside the set still runs.
    const next = await runDispatch(h.opts({ command: 'next' }), h.deps());
    expect(next.cards.map((c) => [c.key, c.skipReason])).toEqual([
      [sub, 'has an open delivery (acme/shop#4)'],
      [free, null],
    ]);
    expect(next.legs.map((l) => [l.key, l.disposition])).toEqual([[free, 'implemented']]);
  });
});

describe('which ref fix and review fetch', () => {
  it.each([
    ['https://github.com/acme/shop.git', 'https://github.com/acme/shop/pull/12', 'refs/pull/12/head'],
    ['git@github.com:acme/shop.git', 'https://github.com/acme/shop/pull/12', 'refs/pull/12/head'],
    ['https://ghe.corp.test/acme/shop', 'https://ghe.corp.test/acme/shop/pull/9', 'refs/pull/9/head'],
    ['/srv/git/shop.git', 'https://github.com/acme/shop/pull/12', 'refs/heads/svc/PROJ-1'],
    ['https://gitlab.test/acme/shop.git', 'https://gitlab.test/acme/shop/-/merge_requests/4', 'refs/heads/svc/PROJ-1'],
  ])('origin %s, delivery %s → %s', (origin, url, ref) => {
    const d = { repo: 'acme/shop', number: 12, title: 't', url, state: 'open' as const, ci: 'failing' as const, baseRef: 'main', defaultBranch: 'main' };
    expect(headRefOf(d, 'PROJ-1', origin)).toBe(ref);
  });
});
