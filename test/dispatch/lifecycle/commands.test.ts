// The lane and scoped commands end to end (run_scope with its close-out, batch, next, auto,
// continue), sharing the queue on a 409, and recovery of a run whose process died.
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Journal } from '../../../src/dispatch/wire/journal.js';
import { runDispatch } from '../../../src/dispatch/lifecycle/dispatch.js';
import { recoverRuns } from '../../../src/dispatch/state/recover.js';
import { createRunFolder, runPaths } from '../../../src/dispatch/state/folder.js';
import { engineEachTest } from '../../support/engine.js';

const h = engineEachTest();

const cardsOf = async (runId: string) => (await h.service.getDispatchRun(runId)).cards.map((c) => [c.workItemKey, c.disposition, c.skipReason]);

describe('run_scope', () => {
  it('runs the leaves blockers first, records skips, then the close-out once in the scope branch', async () => {
    const story = h.item('story', 'S');
    const a = h.item('subtask', 'A', { parentKey: story });
    const b = h.item('subtask', 'B', { parentKey: story });
    const done = h.item('subtask', 'done', { parentKey: story, status: 'done' });
    h.svc.admin.addLink(b, a, 'blocks');
    const s = await runDispatch(h.opts({ command: 'run_scope', keys: [story] }), h.deps());
    expect(s).toMatchObject({ stopReason: 'completed', status: 'succeeded', exitCode: 0 });
    expect(s.legs.map((l) => l.key)).toEqual([b, a]);
    expect(await cardsOf(s.runId!)).toEqual([
      [b, 'implemented', null],
      [a, 'implemented', null],
      [done, 'skipped', 'done (status done)'],
    ]);
    expect(s.closeOut).toMatchObject({ outcome: 'succeeded' });
    expect(existsSync(`${runPaths(h.stateDir, s.runId!).logs}/${story}.close-out.log`)).toBe(true);
  });
});

describe('batch and next', () => {
  it('batch stops max when the cap cut the set, drained otherwise', async () => {
    const [a, b, c] = [h.item('task', 'A'), h.item('task', 'B'), h.item('task', 'C')];
    const capped = await runDispatch(h.opts({ command: 'batch', maxCards: 2 }), h.deps());
    expect(capped).toMatchObject({ stopReason: 'max', status: 'succeeded' });
    expect(capped.legs.map((l) => l.key)).toEqual([a, b]);
    // A and B landed on their branches: only --rerun hands them out again.
    const all = await runDispatch(h.opts({ command: 'batch', rerun: true }), h.deps());
    expect(all).toMatchObject({ stopReason: 'drained', status: 'succeeded' });
    expect(all.legs.map((l) => l.key)).toEqual([a, b, c]);
  });

  it('next with nothing ready says so and opens no run', async () => {
    h.item('task', 'blocked', { blockedBy: [h.item('task', 'human blocker', { executor: 'human', status: 'in_progress' })] });
    const s = await runDispatch(h.opts({ command: 'next' }), h.deps());
    // The human blocker itself is a ready leaf but not bug work nor a container: next has nothing.
    expect(s).toMatchObject({ runId: null, exitCode: 0, note: 'nothing is ready' });
    // Said once, by the command printing the summary's note; the engine does not say it too.
    expect(h.seen.filter((l) => l.includes('nothing is ready'))).toEqual([]);
  });

  it('a 409 on open reselects without the card another run holds (queue sharing)', async () => {
    const [a, b] = [h.item('task', 'A'), h.item('task', 'B')];
    const other = await h.service.openDispatchRun({ projectKey: h.svc.projectKey, command: 'run', cards: [{ workItemKey: a }] });
    const s = await runDispatch(h.opts({ command: 'batch' }), h.deps());
    expect(s.legs.map((l) => l.key)).toEqual([b]);
    expect(s.cards.map((c) => c.key)).toEqual([b]);
    expect(h.seen).toContain(`info ${a} is in run ${other.run.id} (running): reselecting without it`);
  });

  it("next moves on to the following container when another run holds the first one's leaves", async () => {
    const first = h.item('story', 'first', { priority: 'highest' });
    const taken = h.item('subtask', 'taken', { parentKey: first });
    const second = h.item('story', 'second', { priority: 'high' });
    const free = h.item('subtask', 'free', { parentKey: second });
    await h.service.openDispatchRun({ projectKey: h.svc.projectKey, command: 'run', cards: [{ workItemKey: taken }] });
    const s = await runDispatch(h.opts({ command: 'next' }), h.deps());
    expect(s.legs.map((l) => l.key)).toEqual([free]);
    expect(s.scopeKey).toBe(second);
  });

  it('a 409 naming none of our cards is not retried forever', async () => {
    const a = h.item('task', 'A');
    const deps = h.deps();
    let opens = 0;
    deps.service = {
      ...deps.service,
      openDispatchRun: async () => {
        opens++;
        throw Object.assign(new Error('conflict somewhere else'), { status: 409, code: 'CONFLICT' });
      },
    };
    await expect(runDispatch(h.opts({ keys: [a] }), deps)).rejects.toMatchObject({ status: 409 });
    expect(opens).toBe(1);
  });
});

describe('auto', () => {
  it('loops runs until drained, never picking a card twice, and skips recent local failures', async () => {
    const [a, b, c] = [h.item('task', 'A'), h.item('task', 'B'), h.item('task', 'C')];
    const first = await runDispatch(h.opts({ command: 'auto', maxCards: 2 }), h.deps());
    expect(first.runs!.map((r) => r.stopReason)).toEqual(['max']);
    expect(first.legs.map((l) => l.key)).toEqual([a, b]);

    const failing = await runDispatch(h.opts({ command: 'auto', keys: [], rerun: true, onFailure: 'continue', agent: { agentCmd: 'false' } }), h.deps());
    expect(failing.legs.map((l) => [l.key, l.disposition])).toEqual([
      [a, 'failed'],
      [b, 'failed'],
      [c, 'failed'],
    ]);
    expect(failing.runs!.map((r) => r.stopReason)).toEqual(['drained']);

    // Those three failed recently: a new auto leaves them alone unless retryFailed.
    const d = h.item('task', 'D');
    const next = await runDispatch(h.opts({ command: 'auto' }), h.deps());
    expect(next.legs.map((l) => l.key)).toEqual([d]);
    // A's branch still holds its earlier implementation: retrying failures picks C, --rerun picks A.
    const retry = await runDispatch(h.opts({ command: 'auto', retryFailed: true, maxCards: 1 }), h.deps());
    expect(retry.legs.map((l) => l.key)).toEqual([c]);
    const rerun = await runDispatch(h.opts({ command: 'auto', retryFailed: true, rerun: true, maxCards: 1 }), h.deps());
    expect(rerun.legs.map((l) => l.key)).toEqual([a]);
  });

  it('runs several rounds, closing completed while more is ready', async () => {
    const [a, b, c] = [h.item('task', 'A'), h.item('task', 'B'), h.item('task', 'C')];
    // Each card becomes ready only once the one before it is done: one card per round.
    h.svc.admin.addLink(a, b, 'blocks');
    h.svc.admin.addLink(b, c, 'blocks');
    const deps = h.deps();
    const realAgentProcess = deps.runAgentProcess;
    deps.runAgentProcess = async (spec) => {
      const r = await realAgentProcess(spec);
      h.svc.admin.setStatus(spec.env.SVC_CARD_KEY!, 'done');
      return r;
    };
    const s = await runDispatch(h.opts({ command: 'auto' }), deps);
    expect(s.legs.map((l) => l.key)).toEqual([a, b, c]);
    expect(s.runs!.map((r) => r.stopReason)).toEqual(['completed', 'completed', 'drained']);
  });

  it('a failing "is more ready?" read after the legs is a fault: the run still closes, halted/failed, exit by the error', async () => {
    const a = h.item('task', 'A');
    const deps = h.deps();
    let legsRan = false;
    const realAgentProcess = deps.runAgentProcess;
    deps.runAgentProcess = async (spec) => {
      const r = await realAgentProcess(spec);
      legsRan = true;
      return r;
    };
    const service = deps.service;
    deps.service = {
      ...service,
      listWorkItems: (projectKey, query) =>
        legsRan ? Promise.reject(Object.assign(new Error('service unreachable'), { exitCode: 5 })) : service.listWorkItems(projectKey, query),
    };
    const s = await runDispatch(h.opts({ command: 'auto' }), deps);
    expect(s.legs.map((l) => [l.key, l.disposition])).toEqual([[a, 'implemented']]);
    expect(s).toMatchObject({ stopReason: 'halted', status: 'failed', exitCode: 5 });
    expect(await h.service.getDispatchRun(s.runId!)).toMatchObject({ status: 'failed', stopReason: 'halted' });
  });
});

describe('continue', () => {
  it('runs the legs of a run that did not end implemented, as the original command', async () => {
    const [a, b, c] = [h.item('task', 'A'), h.item('task', 'B'), h.item('task', 'C')];
    const halted = await runDispatch(h.opts({ keys: [a, b, c] }), {
      ...h.deps(),
      runAgentProcess: (() => {
        let n = 0;
        const deps = h.deps();
        return (spec) => (n++ === 1 ? deps.runAgentProcess({ ...spec, argv: ['false'] }) : deps.runAgentProcess(spec));
      })(),
    });
    expect(halted.stopReason).toBe('halted');
    const s = await runDispatch(h.opts({ command: 'continue', keys: [halted.runId!] }), h.deps());
    expect(s).toMatchObject({ command: 'continue', stopReason: 'completed', status: 'succeeded' });
    expect(s.legs.map((l) => l.key)).toEqual([b, c]);
  });
});

describe('recover', () => {
  it('sends what the service did not store, then closes interrupted; a reaped run is only marked', async () => {
    const a = h.item('task', 'A');
    // A `svc run` of card A as far as its open: the run on the service and its state folder.
    const openRun = async () => {
      const opened = await h.service.openDispatchRun({ projectKey: h.svc.projectKey, command: 'run', cards: [{ workItemKey: a }] });
      const paths = createRunFolder(h.stateDir, {
        runId: opened.run.id,
        baseUrl: h.svc.url,
        projectKey: h.svc.projectKey,
        command: 'run',
        originalCommand: 'run',
        scopeKey: null,
        baseSeq: 0,
        openedAt: new Date().toISOString(),
        cards: [{ workItemKey: a }],
        options: {},
      });
      return { id: opened.run.id, paths };
    };
    const { id, paths } = await openRun();
    const journal = Journal.open(paths.journal);
    journal.append({ workItemKey: a, disposition: 'running', sessionBranch: `svc/${a}` });
    journal.append({ workItemKey: a, disposition: 'implemented', sessionBranch: `svc/${a}`, exitCode: 0 });
    // The first event reached the service but the process died before writing its ack.
    await h.service.appendDispatchEvents(id, { events: [{ workItemKey: a, disposition: 'running', sessionBranch: `svc/${a}` }] });
    journal.close();

    const deps = { stateDir: h.stateDir, serviceFor: () => h.service, output: { info: () => {}, warn: () => {} } };
    const [result] = await recoverRuns(deps);
    expect(result).toMatchObject({ runId: id, action: 'closed', sent: 1, stopReason: 'interrupted', status: 'cancelled' });
    const run = await h.service.getDispatchRun(id);
    expect(run.seq).toBe(2);
    expect(run.cards[0]).toMatchObject({ disposition: 'implemented' });
    expect(await recoverRuns(deps)).toEqual([]);

    const other = await openRun();
    await h.service.closeDispatchRun(other.id, { stopReason: 'halted', status: 'failed' });
    const [reaped] = await recoverRuns(deps);
    expect(reaped).toMatchObject({ runId: other.id, action: 'already-closed', sent: 0 });
  });
});
