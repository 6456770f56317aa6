// The event stream and a whole run through a proxy that breaks the wire the way networks do: the
// answer of an applied append is lost, and the engine must neither lose nor double an event.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createApiClient } from '../../../src/api/client.js';
import { dispatchServiceOf } from '../../../src/dispatch/wire/service.js';
import { EventStream } from '../../../src/dispatch/wire/event-stream.js';
import { Journal } from '../../../src/dispatch/wire/journal.js';
import { runDispatch } from '../../../src/dispatch/lifecycle/dispatch.js';
import { recoverRuns } from '../../../src/dispatch/state/recover.js';
import { Interrupted } from '../../../src/dispatch/signals.js';
import { startFaultProxy, type FaultProxy } from '../../support/fault-proxy.js';
import { startHarness, type Harness } from '../../support/engine.js';

let h: Harness;
let proxy: FaultProxy;
beforeEach(async () => {
  h = await startHarness();
  proxy = await startFaultProxy({ target: h.svc.url });
});
afterEach(async () => {
  await proxy.close();
  await h.close();
});

const EVENTS = /\/dispatch-runs\/[^/]+\/events$/;

describe('through a faulty wire', () => {
  it('an append applied but answered by a reset is not sent twice; the rest is', async () => {
    const a = h.item('task', 'A');
    const client = createApiClient({ baseUrl: proxy.url, token: h.svc.token, maxWaitMs: 2_000, retry: { baseDelayMs: 5, maxDelayMs: 20 } });
    const service = dispatchServiceOf(client);
    const { run } = await service.openDispatchRun({ projectKey: h.svc.projectKey, command: 'run', cards: [{ workItemKey: a }] });
    proxy.setPlan([
      { method: 'POST', path: EVENTS, nth: 1, fault: { kind: 'reset-after' } },
      { method: 'POST', path: EVENTS, nth: 2, fault: { kind: 'status', status: 503 } },
    ]);
    const journal = Journal.open(join(mkdtempSync(join(tmpdir(), 'svc-wire-')), 'journal.jsonl'));
    const stream = new EventStream({ service, runId: run.id, journal, baseSeq: 0, flushIntervalMs: 10, maxBatch: 50, retryBaseMs: 5 });
    for (let i = 0; i < 120; i++) stream.push({ workItemKey: a, body: `line ${i}` });
    expect(await stream.flush(10_000)).toBe(true);
    await stream.stop();
    const after = await service.getDispatchRun(run.id);
    expect(after.seq).toBe(120);
    expect(journal.ackedSeq).toBe(120);
    expect(stream.stats.ambiguousRecoveries).toBe(1);
    // Batch 1 (lost answer) is never resent once the seq read shows it stored; batch 2 (503, not
    // stored) is retried whole; then the last 20.
    const appends = proxy.requests('POST', EVENTS).map((r) => (JSON.parse(r.body) as { events: { body: string }[] }).events);
    expect(appends.map((e) => e.length)).toEqual([50, 50, 50, 20]);
    expect(appends.map((e) => e[0]!.body)).toEqual(['line 0', 'line 50', 'line 50', 'line 100']);
    await client.close();
  });

  it('a whole run keeps its dispositions exact when append answers are lost', async () => {
    const a = h.item('task', 'A');
    const b = h.item('task', 'B');
    const client = createApiClient({ baseUrl: proxy.url, token: h.svc.token, maxWaitMs: 2_000, retry: { baseDelayMs: 5, maxDelayMs: 20 } });
    // Every other append loses its answer (a fixed plan: with faster legs a run may make only a
    // couple of appends, and a coin flip per append could miss them all).
    proxy.setPlan([{ method: 'POST', path: EVENTS, nth: [1, 3, 5, 7, 9], fault: { kind: 'reset-after' } }]);
    const s = await runDispatch(h.opts({ keys: [a, b], parallel: 2 }), h.deps({ service: dispatchServiceOf(client) }));
    expect(s).toMatchObject({ stopReason: 'completed', status: 'succeeded', exitCode: 0 });
    expect(proxy.seen.some((r) => r.fault === 'reset-after')).toBe(true);
    const run = await h.service.getDispatchRun(s.runId!);
    expect(run.seq).toBe(4);
    expect(run.cards.map((c) => c.disposition)).toEqual(['implemented', 'implemented']);
    await client.close();
  });
});

describe('interrupted while the service is unreachable', () => {
  it('leaves the run open with its journal, and recover delivers every disposition then closes it', async () => {
    const a = h.item('task', 'A');
    const client = createApiClient({ baseUrl: proxy.url, token: h.svc.token, maxWaitMs: 200, retry: { baseDelayMs: 5, maxDelayMs: 20 } });
    const ctl = new AbortController();
    const deps = h.deps({ service: dispatchServiceOf(client), signal: ctl.signal });
    deps.output.legStarted = () => {
      // The service goes away, then the user presses Ctrl-C.
      proxy.setPlan([{ method: 'POST', fault: { kind: 'status', status: 503 } }]);
      setTimeout(() => ctl.abort(new Interrupted('SIGINT')), 50);
    };
    const opts = h.opts({ keys: [a], agent: { agentCmd: 'sleep 30' } });
    const s = await runDispatch({ ...opts, timeouts: { ...opts.timeouts, flushMs: 300 } }, deps);
    expect(s).toMatchObject({ status: 'running', exitCode: 130 });
    expect(h.seen.some((l) => l.includes('svc runs recover'))).toBe(true);

    proxy.setPlan([]);
    const [r] = await recoverRuns({ stateDir: h.stateDir, serviceFor: () => h.service, output: { info: () => {}, warn: () => {} } });
    expect(r).toMatchObject({ runId: s.runId, action: 'closed', stopReason: 'interrupted', status: 'cancelled' });
    const run = await h.service.getDispatchRun(s.runId!);
    expect(run.cards[0]).toMatchObject({ workItemKey: a, disposition: 'failed', sessionBranch: `svc/${a}` });
    await client.close();
  });
});

describe('parallel legs', () => {
  it('runs up to N legs at once, each in its own worktree', async () => {
    const keys = [h.item('task', 'A', { type: 'research' }), h.item('task', 'B', { type: 'research' })];
    // A rendezvous instead of a stopwatch: each agent says it is running, then waits (10 s at
    // most) until both are, and writes down how many it saw and where it ran. Legs run one after
    // the other would each see only themselves; a loaded machine only makes them wait longer.
    const dir = mkdtempSync(join(tmpdir(), 'svc-parallel-'));
    const script = join(dir, 'agent.sh');
    writeFileSync(
      script,
      [
        `mkdir -p ${dir}/running && touch ${dir}/running/$SVC_CARD_KEY`,
        'i=0',
        `while [ "$(ls ${dir}/running | wc -l)" -lt 2 ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done`,
        `echo "$(ls ${dir}/running | wc -l) $(pwd)" > ${dir}/$SVC_CARD_KEY.saw`,
      ].join('\n'),
    );
    const s = await runDispatch(h.opts({ keys, parallel: 2, agent: { agentCmd: `sh ${script}` } }), h.deps());
    const saw = keys.map((k) =>
      readFileSync(join(dir, `${k}.saw`), 'utf8')
        .trim()
        .split(' '),
    );
    expect(saw.map(([running]) => running)).toEqual(['2', '2']);
    expect(new Set(saw.map(([, cwd]) => cwd)).size).toBe(2);
    expect(s.legs.map((l) => [l.key, l.disposition])).toEqual(keys.map((k) => [k, 'implemented']));
  });
});
