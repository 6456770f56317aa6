// Two `auto` invocations (two machines: own state folders, own repositories) over one queue on the
// real local service. The second one's open meets the first one's run (409) and reselects without
// its cards; those cards stay ready after the first run closes (a run moves no status), so the
// second one must leave them alone for the rest of its invocation: in later rounds and in its
// "is more ready?" check alike. Agents and worktrees are in-process doubles (./instant-agent.ts):
// what is proven here is which machine runs which card, not how an agent runs.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runDispatch } from '../../../src/dispatch/lifecycle/dispatch.js';
import type { DispatchDeps } from '../../../src/dispatch/lifecycle/types.js';
import { openWithReselect } from '../../../src/dispatch/lifecycle/open.js';
import type { LegSummary } from '../../../src/dispatch/ports.js';
import type { Selection } from '../../../src/dispatch/select/types.js';
import { makeRepo } from '../../support/cli.js';
import { engineEachTest } from '../../support/engine.js';
import { inRepoWorktree, instantAgent } from './instant-agent.js';

const h = engineEachTest();

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** A second machine: its own state folder and progress sink. */
function machine(name: string, over: Partial<DispatchDeps> = {}): { deps: DispatchDeps; seen: string[]; legs: LegSummary[] } {
  const seen: string[] = [];
  const legs: LegSummary[] = [];
  const deps = h.deps({
    prepareWorktree: inRepoWorktree,
    stateDir: mkdtempSync(join(tmpdir(), `svc-state-${name}-`)),
    output: {
      legStarted: (l) => seen.push(`start ${l.key}`),
      legFinished: (l) => {
        legs.push(l);
        seen.push(`end ${l.key} ${l.disposition}`);
      },
      info: (m) => seen.push(`info ${m}`),
      warn: (m) => seen.push(`warn ${m}`),
    },
    ...over,
  });
  return { deps, seen, legs };
}

const runningRuns = () => (h.svc.db.prepare("SELECT COUNT(*) AS n FROM dispatch_runs WHERE status = 'running'").get() as { n: number }).n;

describe('two auto over one queue', () => {
  it("A with --max 3 opens first and closes first; B never runs A's cards: each card is implemented exactly once", async () => {
    const keys = Array.from({ length: 10 }, (_, i) => h.item('task', `leaf ${i + 1}`));
    const bLegStarted = deferred();
    const aDone = deferred();
    const a = machine('a');
    const b = machine('b');
    // A's legs wait until B has opened its run (B met A's run on open) and started its first leg;
    // B's legs wait until A has closed: A's three cards are then ready again for B to see.
    a.deps.runAgentProcess = async (spec) => {
      await bLegStarted.promise;
      return instantAgent(spec);
    };
    b.deps.runAgentProcess = async (spec) => {
      bLegStarted.resolve();
      await aDone.promise;
      return instantAgent(spec);
    };

    const runA = runDispatch(h.opts({ command: 'auto', maxCards: 3, allowEmpty: true }), a.deps);
    void runA.finally(() => aDone.resolve());
    await expect.poll(runningRuns, { timeout: 10_000 }).toBe(1);
    const repoB = await makeRepo();
    const runB = runDispatch(h.opts({ command: 'auto', repo: repoB, allowEmpty: true }), b.deps);
    const [sa, sb] = await Promise.all([runA, runB]);

    const context = `A: ${a.seen.join(' | ')}\nB: ${b.seen.join(' | ')}`;
    expect(
      sa.legs.map((l) => l.key),
      context,
    ).toEqual(keys.slice(0, 3));
    expect(
      sa.runs!.map((r) => r.stopReason),
      context,
    ).toEqual(['max']);
    expect(
      b.seen.some((l) =>
        new RegExp(
          `^info ${keys
            .slice(0, 3)
            .map((k) => `${k} is in run ${sa.runs![0]!.runId} \\(running\\)`)
            .join('; ')}: reselecting without them$`,
        ).test(l),
      ),
      context,
    ).toBe(true);
    // B ran the rest once, and its one run drained: A's cards, still ready, are not "more".
    expect(
      sb.legs.map((l) => l.key),
      context,
    ).toEqual(keys.slice(3));
    expect(
      sb.runs!.map((r) => r.stopReason),
      context,
    ).toEqual(['drained']);
    expect([sa.exitCode, sb.exitCode]).toEqual([0, 0]);

    // The service agrees: every card implemented in exactly one leg across both machines.
    const legs = h.svc.db
      .prepare("SELECT work_item_key AS key, COUNT(*) AS n FROM dispatch_cards WHERE disposition = 'implemented' GROUP BY work_item_key ORDER BY work_item_key")
      .all() as { key: string; n: number }[];
    expect(legs.map((l) => [l.key, l.n]).sort(), context).toEqual(keys.map((k) => [k, 1]).sort());
    expect(
      [...sa.legs, ...sb.legs].every((l) => l.disposition === 'implemented'),
      context,
    ).toBe(true);
  }, 60_000);

  it('a later round of B leaves A\'s cards alone too (not only the "is more ready?" check)', async () => {
    // B's rounds come from a blocker: B2 becomes ready only once B1 is done, so B runs B1, then
    // (its check seeing B2) a second round — which must not take A's cards, still ready, either.
    const [a1, a2] = [h.item('task', 'A1'), h.item('task', 'A2')];
    const b1 = h.item('task', 'B1');
    const b2 = h.item('task', 'B2', { blockedBy: [b1] });
    const bLegStarted = deferred();
    const aDone = deferred();
    const a = machine('a');
    const b = machine('b');
    a.deps.runAgentProcess = async (spec) => {
      await bLegStarted.promise;
      return instantAgent(spec);
    };
    b.deps.runAgentProcess = async (spec) => {
      bLegStarted.resolve();
      await aDone.promise;
      const r = await instantAgent(spec);
      h.svc.admin.setStatus(spec.env.SVC_CARD_KEY!, 'done');
      return r;
    };
    const runA = runDispatch(h.opts({ command: 'auto', keys: [], maxCards: 2, allowEmpty: true }), a.deps);
    void runA.finally(() => aDone.resolve());
    await expect.poll(runningRuns, { timeout: 10_000 }).toBe(1);
    const runB = runDispatch(h.opts({ command: 'auto', repo: await makeRepo(), allowEmpty: true }), b.deps);
    const [sa, sb] = await Promise.all([runA, runB]);
    const context = `A: ${a.seen.join(' | ')}\nB: ${b.seen.join(' | ')}`;
    expect(
      sa.legs.map((l) => l.key),
      context,
    ).toEqual([a1, a2]);
    expect(
      sb.legs.map((l) => l.key),
      context,
    ).toEqual([b1, b2]);
    expect(
      sb.runs!.map((r) => r.stopReason),
      context,
    ).toEqual(['completed', 'drained']);
  }, 60_000);
});

describe('openWithReselect', () => {
  const selection = (keys: string[]): Selection =>
    ({
      command: 'auto',
      originalCommand: 'auto',
      scopeKey: null,
      mode: 'implement',
      closeOut: false,
      capped: false,
      empty: keys.length === 0,
      note: '',
      cards: keys.map((key) => ({ key, title: key, item: {} as Selection['cards'][number]['item'], skipReason: null, after: [], gatedBy: null })),
    }) as Selection;

  it('reports the keys each 409 excluded, as they are excluded and with the opened run', async () => {
    const heard: string[][] = [];
    let opens = 0;
    const service = {
      openDispatchRun: async () => {
        opens++;
        if (opens === 1) throw Object.assign(new Error('P-1 is already in running run r1'), { status: 409, code: 'CONFLICT' });
        if (opens === 2) throw Object.assign(new Error('P-2, P-9 are already in running run r2'), { status: 409, code: 'CONFLICT' });
        return { run: { id: 'r3' }, created: true } as never;
      },
    };
    const result = await openWithReselect(
      service,
      selection(['P-1', 'P-2', 'P-3']),
      () => ({}) as never,
      async (exclude) => selection(['P-1', 'P-2', 'P-3', 'P-4'].filter((k) => !exclude.has(k))),
      () => undefined,
      (keys) => heard.push([...keys]),
    );
    // P-9 is not one of our cards: a hint outside the set is never trusted.
    expect(heard).toEqual([['P-1'], ['P-2']]);
    if (!result.opened) throw new Error('a run should have opened');
    expect(result.takenElsewhere).toEqual(['P-1', 'P-2']);
    expect(result.selection.cards.map((c) => c.key)).toEqual(['P-3', 'P-4']);
  });

  it('reselects past every card a 409 names, with no cap, until none is left, and reports each key', async () => {
    const heard: string[] = [];
    const keys = ['P-1', 'P-2', 'P-3', 'P-4', 'P-5', 'P-6', 'P-7', 'P-8'];
    const service = {
      openDispatchRun: async (body: { cards?: { workItemKey: string }[] }) =>
        Promise.reject(
          Object.assign(new Error(`already in another running run of this project: ${body.cards?.[0]?.workItemKey}`), { status: 409, code: 'CONFLICT' }),
        ),
    };
    const sel = (exclude: ReadonlySet<string>) => selection(keys.filter((k) => !exclude.has(k)).slice(0, 1));
    const result = await openWithReselect(
      service,
      sel(new Set()),
      (s) => ({ cards: s.cards.map((c) => ({ workItemKey: c.key })) }) as never,
      async (exclude) => sel(exclude),
      () => undefined,
      (taken) => heard.push(...taken),
    );
    // Eight opens, each refused: every key is known held, and the caller is told nothing opened
    // (it used to give up after five reselections, before hearing the sixth key).
    expect(heard).toEqual(keys);
    expect(result.opened).toBeNull();
  });

  it('reports them even when nothing is left to open', async () => {
    const heard: string[] = [];
    const result = await openWithReselect(
      { openDispatchRun: async () => Promise.reject(Object.assign(new Error('P-1 taken'), { status: 409, code: 'CONFLICT' })) },
      selection(['P-1']),
      () => ({}) as never,
      async () => selection([]),
      () => undefined,
      (keys) => heard.push(...keys),
    );
    // The message names no run: the card is said to be elsewhere, as the service said.
    expect(result).toEqual({ opened: null, held: new Map([['P-1', 'already in another running run']]) });
    expect(heard).toEqual(['P-1']);
  });
});
