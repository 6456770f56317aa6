// closeDispatchRun (close), 28 (close-out prompt) and 31 (heartbeat).
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import type { DispatchRun } from '../../../src/contract/types.js';
import { moves, startHarness, type Harness } from './harness.js';

let h: Harness;
beforeEach(async () => {
  h = await startHarness();
});
afterEach(async () => {
  await h.svc.close();
});

const close = (id: string, body: unknown, token?: string) => h.svc.call('POST', `/dispatch-runs/${id}/close`, { token, body });
const append = (id: string, events: unknown[]) => h.svc.call('POST', `/dispatch-runs/${id}/events`, { body: { events } });

describe('close (closeDispatchRun)', () => {
  test('settles the legs: queued → not_reached, running → failed, the rest untouched; endedAt stamped', async () => {
    const keys = h.items(5);
    const run = await h.open({
      cards: [
        { workItemKey: keys[0] },
        { workItemKey: keys[1] },
        { workItemKey: keys[2] },
        { workItemKey: keys[3], skipReason: 'human' },
        { workItemKey: keys[4] },
      ],
    });
    await append(run.id, [...moves('implemented', keys[0]), ...moves('running', keys[1]), ...moves('failed', keys[4])]);
    h.clock.advance(60_000);
    const res = await close(run.id, { stopReason: 'halted', status: 'failed' });
    expect(res.status).toBe(200);
    const closed: DispatchRun = res.body;
    expect(closed).toMatchObject({ id: run.id, status: 'failed', stopReason: 'halted', endedAt: h.clock.now().toISOString() });
    expect(closed.cards.map((c) => c.disposition)).toEqual(['implemented', 'failed', 'not_reached', 'skipped', 'failed']);
    expect((await h.svc.call('GET', `/dispatch-runs/${run.id}`)).body).toEqual(closed);
  });

  test.each([
    ['halted', 'failed'],
    ['interrupted', 'cancelled'],
    ['replanned', 'succeeded'],
    ['completed', 'succeeded'],
    ['drained', 'succeeded'],
    ['max', 'succeeded'],
    ['gated', 'succeeded'],
  ])('without status, stopReason %s derives %s', async (stopReason, status) => {
    const run = await h.open();
    const res = await close(run.id, { stopReason });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status, stopReason });
  });

  test('an explicit status wins over the derivation', async () => {
    const run = await h.open();
    expect((await close(run.id, { stopReason: 'completed', status: 'timed_out' })).body.status).toBe('timed_out');
  });

  test("422 without stopReason, with an unknown one, a bad status, or abandoned (the reaper's own)", async () => {
    const run = await h.open();
    for (const body of [{}, { stopReason: 'bored' }, { stopReason: 'completed', status: 'running' }, { stopReason: 'abandoned' }]) {
      const res = await close(run.id, body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body.code).toBe('INVALID_REQUEST');
    }
    expect((await h.svc.call('GET', `/dispatch-runs/${run.id}`)).body.status).toBe('running');
  });

  test('409 RUN_CLOSED when already terminal, the first close unchanged', async () => {
    const [a] = h.items(1);
    const run = await h.open({ cards: [{ workItemKey: a }] });
    const first = await close(run.id, { stopReason: 'completed' });
    const second = await close(run.id, { stopReason: 'halted', status: 'failed' });
    expect(second.status).toBe(409);
    expect(second.body.code).toBe('RUN_CLOSED');
    expect((await h.svc.call('GET', `/dispatch-runs/${run.id}`)).body).toEqual(first.body);
  });

  test('404 for an unknown run', async () => {
    expect((await close('run_nope', { stopReason: 'completed' })).status).toBe(404);
  });
});

describe('close-out prompt (getCloseOutPrompt)', () => {
  test('names the scope, its branch, and each landed leg with its title; writes nothing', async () => {
    const scope = h.svc.admin.createWorkItem({ projectKey: 'PROJ', kind: 'story', title: 'Checkout flow', descriptionMd: 'Pay in one step.' }).key;
    const leaf = (title: string) => h.svc.admin.createWorkItem({ projectKey: 'PROJ', kind: 'subtask', title, parentKey: scope }).key;
    const [a, b, c] = [leaf('Cart totals'), leaf('Payment form'), leaf('Receipt email')];
    const run = await h.open({ command: 'run_scope', scopeKey: scope, cards: [a, b, c].map((workItemKey) => ({ workItemKey })) });
    await append(run.id, [...moves('implemented', c), { workItemKey: a, disposition: 'implemented', sessionBranch: `svc/${a}` }, ...moves('failed', b)]);
    const res = await h.svc.call('GET', `/dispatch-runs/${run.id}/close-out-prompt`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ runId: run.id, targetKey: scope, landedKeys: [a, c] });
    const prompt: string = res.body.prompt;
    for (const text of [scope, 'Checkout flow', `svc/${scope}`, `${a} "Cart totals"`, `${c} "Receipt email"`, `svc/${c}`, 'Pay in one step.']) {
      expect(prompt).toContain(text);
    }
    expect(prompt).not.toContain('Payment form');
    expect((await h.svc.call('GET', `/dispatch-runs/${run.id}`)).body.seq).toBe(3);
  });

  test('with nothing landed the prompt says so and lists no key', async () => {
    const [scope, a] = h.items(2);
    const run = await h.open({ scopeKey: scope, cards: [{ workItemKey: a }] });
    const res = await h.svc.call('GET', `/dispatch-runs/${run.id}/close-out-prompt`);
    expect(res.body.landedKeys).toEqual([]);
    expect(res.body.prompt).toContain('nothing to integrate');
  });

  test('422 NO_RUN_TARGET for a run without a scope (a scopeLabel alone is not a scope); 404 for an unknown run', async () => {
    const run = await h.open({ scopeLabel: 'just words' });
    const res = await h.svc.call('GET', `/dispatch-runs/${run.id}/close-out-prompt`);
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('NO_RUN_TARGET');
    expect((await h.svc.call('GET', '/dispatch-runs/run_nope/close-out-prompt')).status).toBe(404);
  });
});

describe('heartbeat (heartbeatDispatchRun)', () => {
  test('204 with no body; the server stamps its own time', async () => {
    const run = await h.open();
    h.clock.advance(90_000);
    const res = await h.svc.call('POST', `/dispatch-runs/${run.id}/heartbeat`);
    expect(res.status).toBe(204);
    expect(res.body).toBeUndefined();
    const after = (await h.svc.call('GET', `/dispatch-runs/${run.id}`)).body;
    expect(after.lastHeartbeatAt).toBe(h.clock.now().toISOString());
    expect(after.seq).toBe(0);
  });

  test('403 FORBIDDEN for anyone but the operator who opened it', async () => {
    const run = await h.open();
    const other = h.otherUser();
    const res = await h.svc.call('POST', `/dispatch-runs/${run.id}/heartbeat`, { token: other.token });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('FORBIDDEN');
  });

  test('409 RUN_CLOSED once closed; 409 CONFLICT for a hosted run; 404 for an unknown run', async () => {
    const run = await h.open();
    await close(run.id, { stopReason: 'completed' });
    const closed = await h.svc.call('POST', `/dispatch-runs/${run.id}/heartbeat`);
    expect(closed.status).toBe(409);
    expect(closed.body.code).toBe('RUN_CLOSED');
    const hosted = await h.open({ origin: 'hosted' });
    const res = await h.svc.call('POST', `/dispatch-runs/${hosted.id}/heartbeat`);
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('CONFLICT');
    expect((await h.svc.call('POST', '/dispatch-runs/run_nope/heartbeat')).status).toBe(404);
  });
});
