// The three dispatch writes whose retry rules differ (docs/dispatch.md#the-wire): the open is retried with one
// idempotencyKey, the event append is never resent after an ambiguous failure, the heartbeat is
// safe to resend. Plus the answers a broken gateway gives: an HTML 500 and a body cut short.
import { beforeEach, describe, expect, test } from 'vitest';
import { ApiError, exitCodeFor } from '../../src/api/index.js';
import type { Fault } from '../support/fault-proxy.js';
import { caught, harnessForFile } from './harness.js';

const h = harnessForFile();
beforeEach(() => h.reset());

const OPEN = /^\/api\/v1\/dispatch-runs$/;
const EVENTS = /^\/api\/v1\/dispatch-runs\/[^/]+\/events$/;
const BEAT = /^\/api\/v1\/dispatch-runs\/[^/]+\/heartbeat$/;
const ITEM = /^\/api\/v1\/work-items\/[^/]+$/;

/** Opens a run over one fresh task, directly (not through the proxy). */
async function openRun() {
  const task = await h.newTask();
  const { run } = await h.direct.openDispatchRun({ projectKey: h.projectKey, command: 'run', cards: [{ workItemKey: task.key }] });
  return { run, key: task.key };
}

describe('open (openDispatchRun): retried with the same idempotencyKey, one run', () => {
  test.each([
    ['reset before forwarding: the retry creates it', { kind: 'reset-before' } as const, true],
    ['reset after the service answered: the retry finds it', { kind: 'reset-after' } as const, false],
    ['a 502 from the gateway', { kind: 'status', status: 502 } as const, true],
  ])('%s', async (_name, fault, createdOnRetry) => {
    const task = await h.newTask();
    h.proxy.setPlan([{ method: 'POST', path: OPEN, times: 1, fault }]);
    const opened = await h.client().openDispatchRun({ projectKey: h.projectKey, command: 'run', cards: [{ workItemKey: task.key }] });
    expect(opened.created).toBe(createdOnRetry);

    const sent = h.proxy.requests('POST', OPEN).map((r) => JSON.parse(r.body) as { idempotencyKey?: string });
    expect(sent).toHaveLength(2);
    expect(sent[0]?.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
    expect(sent[1]?.idempotencyKey).toBe(sent[0]?.idempotencyKey);

    // Exactly one run: opening again with that key finds the same run, and the card is taken.
    const again = await h.direct.openDispatchRun({
      projectKey: h.projectKey,
      command: 'run',
      idempotencyKey: sent[0]!.idempotencyKey!,
      cards: [{ workItemKey: task.key }],
    });
    expect(again).toMatchObject({ created: false, run: { id: opened.run.id } });
    const rival = await caught(() => h.direct.openDispatchRun({ projectKey: h.projectKey, command: 'run', cards: [{ workItemKey: task.key }] }));
    expect(rival).toMatchObject({ status: 409 });
    await h.direct.closeDispatchRun(opened.run.id, { stopReason: 'completed', status: 'succeeded' });
  });

  test('a caller-given idempotencyKey is sent as is', async () => {
    const task = await h.newTask();
    const key = `ci-job-${Date.now()}`;
    const opened = await h.client().openDispatchRun({ projectKey: h.projectKey, command: 'run', idempotencyKey: key, cards: [{ workItemKey: task.key }] });
    expect(JSON.parse(h.proxy.seen[0]!.body)).toMatchObject({ idempotencyKey: key });
    await h.direct.closeDispatchRun(opened.run.id, { stopReason: 'completed', status: 'succeeded' });
  });
});

describe('append (appendDispatchEvents): never resent after an ambiguous failure', () => {
  test.each([
    ['reset before forwarding', { kind: 'reset-before' } as const, 0, 'reset', 0],
    ['reset after the service answered', { kind: 'reset-after' } as const, 0, 'reset', 2],
    ['a 502', { kind: 'status', status: 502 } as const, 502, null, 0],
    ['a 504', { kind: 'status', status: 504 } as const, 504, null, 0],
    ['a body cut short', { kind: 'truncate' } as const, 200, 'truncated', 2],
  ])('%s: ambiguous, one request; reading the run tells what happened', async (_name, fault, status, wire, applied) => {
    const { run, key } = await openRun();
    h.proxy.setPlan([{ method: 'POST', path: EVENTS, fault }]);
    const error = await caught(() =>
      h.client().appendDispatchEvents(run.id, {
        events: [
          { workItemKey: key, disposition: 'running' },
          { workItemKey: key, body: 'started' },
        ],
      }),
    );
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status, fault: wire, ambiguous: true, attempts: 1 });
    expect(exitCodeFor(error)).toBe(5);
    expect(h.proxy.requests('POST', EVENTS)).toHaveLength(1);
    // What the engine does next: compare the run's seq with the one it knew.
    expect((await h.direct.getDispatchRun(run.id)).seq).toBe(run.seq + applied);
  });

  test('a 503 proves nothing was applied: the append is retried and lands once', async () => {
    const { run, key } = await openRun();
    h.proxy.setPlan([{ method: 'POST', path: EVENTS, times: 2, fault: { kind: 'status', status: 503 } }]);
    const appended = await h.client().appendDispatchEvents(run.id, { events: [{ workItemKey: key, disposition: 'running' }] });
    expect(appended.seq).toBe(run.seq + 1);
    expect(h.proxy.requests('POST', EVENTS).map((r) => r.status)).toEqual([503, 503, 200]);
    expect((await h.direct.getDispatchRun(run.id)).seq).toBe(run.seq + 1);
  });

  test('a closed run answers 409 once, not retried', async () => {
    const { run, key } = await openRun();
    await h.direct.closeDispatchRun(run.id, { stopReason: 'interrupted', status: 'cancelled' });
    const error = await caught(() => h.client().appendDispatchEvents(run.id, { events: [{ workItemKey: key, body: 'late' }] }));
    expect(error).toMatchObject({ status: 409, code: 'RUN_CLOSED', ambiguous: false });
    expect(h.proxy.requests('POST', EVENTS)).toHaveLength(1);
  });
});

describe('heartbeat (heartbeatDispatchRun): safe to resend', () => {
  test.each([
    ['reset after the service answered', { kind: 'reset-after' } as const],
    ['a 502', { kind: 'status', status: 502 } as const],
    ['a 503', { kind: 'status', status: 503 } as const],
  ])('%s: retried, then 204', async (_name, fault) => {
    const { run } = await openRun();
    h.proxy.setPlan([{ method: 'POST', path: BEAT, times: 1, fault }]);
    await expect(h.client().heartbeatDispatchRun(run.id)).resolves.toBeUndefined();
    expect(h.proxy.requests('POST', BEAT).map((r) => r.status)).toEqual([fault.kind === 'reset-after' ? null : fault.status, 204]);
    expect((await h.direct.getDispatchRun(run.id)).lastHeartbeatAt).not.toBeNull();
    await h.direct.closeDispatchRun(run.id, { stopReason: 'completed', status: 'succeeded' });
  });

  test('a closed run answers 409 once: the client stops beating', async () => {
    const { run } = await openRun();
    await h.direct.closeDispatchRun(run.id, { stopReason: 'completed', status: 'succeeded' });
    const error = await caught(() => h.client().heartbeatDispatchRun(run.id));
    expect(error).toMatchObject({ status: 409, code: 'RUN_CLOSED' });
    expect(h.proxy.requests('POST', BEAT)).toHaveLength(1);
  });
});

describe('answers a client cannot read become clean ApiErrors', () => {
  const cases: [string, Fault, Record<string, unknown>, RegExp][] = [
    ['an HTML 500', { kind: 'html-500' }, { status: 500, code: null, fault: null, attempts: 4 }, /HTTP 500 .*not JSON \(text\/html\)/],
    ['a 200 whose body is cut short', { kind: 'truncate' }, { status: 200, code: null, fault: 'truncated' }, /cut/],
    ['a 404 whose body is cut short', { kind: 'truncate', keepBytes: 5 }, { status: 404, code: null, fault: 'truncated', attempts: 1 }, /cut/],
    [
      'a 200 with a non-JSON body',
      { kind: 'status', status: 200, body: 'OK', contentType: 'text/plain' },
      { status: 200, code: null, fault: 'bad_body' },
      /not JSON \(text\/plain\)/,
    ],
  ];

  test.each(cases)('%s', async (_name, fault, shape, message) => {
    const task = await h.newTask();
    const key = fault.kind === 'truncate' && fault.keepBytes ? `${h.projectKey}-999999` : task.key;
    h.proxy.setPlan([{ method: 'GET', path: ITEM, fault }]);
    const error = await caught(() => h.client({ maxWaitMs: 2_000 }).getWorkItem(key));
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject(shape);
    expect((error as Error).message).toMatch(message);
    expect(exitCodeFor(error)).toBe(shape.status === 404 ? 4 : 5);
  });

  test('a read whose body was cut short once is retried and succeeds', async () => {
    const task = await h.newTask('whole answer');
    h.proxy.setPlan([{ method: 'GET', path: ITEM, times: 1, fault: { kind: 'truncate' } }]);
    const { item } = await h.client().getWorkItem(task.key);
    expect(item.title).toBe('whole answer');
    expect(h.infos.map((i) => i.fault)).toEqual(['truncated', null]);
  });
});
