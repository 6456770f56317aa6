// The retry policy of docs/dispatch.md#the-wire on the wire: the client talks to the real local service through
// the fault proxy, and every assertion counts what the proxy actually saw.
import { createServer } from 'node:net';
import { beforeEach, describe, expect, test } from 'vitest';
import { ApiError, createApiClient, exitCodeFor, type ApiClient } from '../../src/api/index.js';
import { startFaultProxy } from '../support/fault-proxy.js';
import { startTestService } from '../support/service.js';
import { caught, harnessForFile } from './harness.js';

const h = harnessForFile();
beforeEach(() => h.reset());

const ME = /^\/api\/v1\/me$/;
const ITEMS = /^\/api\/v1\/projects\/[^/]+\/work-items$/;

describe('429: wait until X-RateLimit-Reset', () => {
  test('waits the time to the reset, then succeeds', async () => {
    h.proxy.setPlan([{ method: 'GET', path: ME, times: 2, fault: { kind: 'rate-limit', resetInMs: 3_000 } }]);
    const me = await h.client().getMe();
    expect(me.permissions.length).toBeGreaterThan(0);
    expect(h.proxy.requests('GET', ME).map((r) => r.status)).toEqual([429, 429, 200]);
    // The reset is whole seconds at least 3 s ahead: each wait reaches it, no exponential guess.
    expect(h.sleeps).toHaveLength(2);
    for (const ms of h.sleeps) {
      expect(ms).toBeGreaterThanOrEqual(2_900);
      expect(ms).toBeLessThanOrEqual(4_300);
    }
  });

  test('on the real clock, the retry is not sent before the reset', async () => {
    h.proxy.setPlan([{ method: 'GET', path: ME, times: 1, fault: { kind: 'rate-limit', resetInMs: 500 } }]);
    const started = Date.now();
    await h.client({ sleep: undefined }).getMe();
    const [limited, ok] = h.proxy.requests('GET', ME);
    expect(limited?.status).toBe(429);
    expect(ok?.status).toBe(200);
    // The proxy's reset was ceil((started + 500) / 1000) seconds: we must not have come back earlier.
    expect(Date.now()).toBeGreaterThanOrEqual(Math.ceil((started + 500) / 1000) * 1000);
  });

  test('a reset past max-wait gives up at once with the 429 (exit 5)', async () => {
    h.proxy.setPlan([{ method: 'GET', path: ME, fault: { kind: 'rate-limit', resetInMs: 60_000 } }]);
    const error = await caught(() => h.client({ maxWaitMs: 5_000 }).getMe());
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 429, code: 'RATE_LIMITED', ambiguous: false, attempts: 1 });
    expect((error as ApiError).rateLimitReset).toBeGreaterThan(Date.now() / 1000);
    expect(exitCodeFor(error)).toBe(5);
    expect(h.proxy.requests('GET', ME)).toHaveLength(1);
    expect(h.sleeps).toEqual([]);
  });

  test('repeated 429s stop once the waits reach max-wait', async () => {
    h.proxy.setPlan([{ method: 'GET', path: ME, fault: { kind: 'rate-limit', resetInMs: 2_000 } }]);
    const error = await caught(() => h.client({ maxWaitMs: 7_000 }).getMe());
    expect(error).toMatchObject({ status: 429 });
    expect(h.sleeps.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(7_000);
    expect(h.proxy.requests('GET', ME).length).toBe(h.sleeps.length + 1);
    expect(h.sleeps.length).toBeGreaterThanOrEqual(2);
  });
});

test("the service's own rate limit: the client waits out the real window and goes on", async () => {
  // A service of its own with a budget of 2 requests per second, so the third call meets a real 429.
  const service = await startTestService({ config: { rateLimit: 2, rateWindowMs: 1_000 } });
  const proxy = await startFaultProxy({ target: service.url });
  const api = createApiClient({ baseUrl: proxy.url, token: service.token, maxWaitMs: 5_000 });
  try {
    // Five calls cannot fit in the windows they span at two per window: some meet a real 429.
    for (let i = 0; i < 5; i++) await api.getMe();
    const statuses = proxy.seen.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(5);
    expect(statuses).toContain(429);
    expect(statuses.every((s) => s === 200 || s === 429)).toBe(true);
    // The retry after each 429 came no earlier than the reset that 429 announced.
    for (const [i, r] of proxy.seen.entries()) {
      if (r.status !== 429) continue;
      expect(proxy.seen[i + 1]!.at).toBeGreaterThanOrEqual(Number(r.responseHeaders['x-ratelimit-reset']) * 1000);
    }
  } finally {
    await api.close();
    await proxy.close();
    await service.close();
  }
});

describe('502/503/504 and network faults: backoff with full jitter', () => {
  test.each([
    ['GET /me', 'GET', ME, (api: ApiClient) => api.getMe()],
    [
      'POST work-items (a 503 means nothing was applied)',
      'POST',
      ITEMS,
      (api: ApiClient) => api.createWorkItem(h.projectKey, { kind: 'task', title: 'after 503s' }),
    ],
  ])('a run of 503s on %s, then success', async (_name, method, path, call) => {
    h.proxy.setPlan([{ method, path, times: 3, fault: { kind: 'status', status: 503 } }]);
    await call(h.client());
    const seen = h.proxy.requests(method, path);
    expect(seen.map((r) => r.status)).toEqual([503, 503, 503, method === 'POST' ? 201 : 200]);
    expect(h.sleeps).toHaveLength(3);
    // One call, one request id, however many attempts.
    expect(new Set(seen.map((r) => r.requestId)).size).toBe(1);
    expect(h.infos.map((i) => i.attempt)).toEqual([1, 2, 3, 4]);
  });

  test('503s until max-wait: the last 503 escapes (exit 5) and the waits stayed inside the budget', async () => {
    h.proxy.setPlan([{ method: 'GET', path: ME, fault: { kind: 'status', status: 503 } }]);
    const error = await caught(() => h.client({ maxWaitMs: 1_000, random: () => 0.99 }).getMe());
    expect(error).toMatchObject({ status: 503, code: 'UNAVAILABLE' });
    expect(exitCodeFor(error)).toBe(5);
    // Ceilings 250, 500, 1000 ms at jitter 0.99: 247 + 495 fit in 1 s, the third does not.
    expect(h.sleeps).toEqual([247, 495]);
    expect(h.proxy.requests('GET', ME)).toHaveLength(3);
    expect((error as ApiError).attempts).toBe(3);
  });

  test.each([
    ['reset before forwarding', { kind: 'reset-before' } as const, 'reset'],
    ['reset after the answer', { kind: 'reset-after' } as const, 'reset'],
    ['a 502', { kind: 'status', status: 502 } as const, null],
    ['a 504', { kind: 'status', status: 504 } as const, null],
  ])('a read after %s is retried', async (_name, fault, wireFault) => {
    h.proxy.setPlan([{ method: 'GET', path: ME, times: 1, fault }]);
    await h.client().getMe();
    expect(h.proxy.requests('GET', ME)).toHaveLength(2);
    expect(h.infos[0]?.fault ?? null).toBe(wireFault);
    expect(h.infos[0]?.retryInMs).not.toBeNull();
  });

  test.each([
    ['reset before forwarding', { kind: 'reset-before' } as const, 0, false],
    ['reset after the answer', { kind: 'reset-after' } as const, 0, true],
    ['a 502', { kind: 'status', status: 502 } as const, 502, false],
    ['a 504', { kind: 'status', status: 504 } as const, 504, false],
  ])('a plain write after %s is not retried and says it is ambiguous', async (_name, fault, status, applied) => {
    const before = (await h.direct.countWorkItems(h.projectKey)).count;
    h.proxy.setPlan([{ method: 'POST', path: ITEMS, fault }]);
    const error = await caught(() => h.client().createWorkItem(h.projectKey, { kind: 'task', title: 'maybe' }));
    expect(error).toMatchObject({ status, ambiguous: true, attempts: 1 });
    expect(h.proxy.requests('POST', ITEMS)).toHaveLength(1);
    // The client cannot tell these apart; the service's state can.
    expect((await h.direct.countWorkItems(h.projectKey)).count).toBe(before + (applied ? 1 : 0));
  });

  test('connection refused is retried for any operation (nothing was sent) until max-wait', async () => {
    const port = await freePort();
    const api = h.client({ baseUrl: `http://127.0.0.1:${port}`, maxWaitMs: 2_000, random: () => 0.99 });
    const error = await caught(() => api.appendDispatchEvents('run-x', { events: [] }));
    expect(error).toMatchObject({ status: 0, fault: 'refused', ambiguous: false });
    expect(exitCodeFor(error)).toBe(5);
    expect(h.sleeps.length).toBeGreaterThanOrEqual(2);
    expect(h.sleeps.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(2_000);
  });

  test('a read that times out is retried; a write that times out is ambiguous and is not', async () => {
    h.proxy.setPlan([{ method: 'GET', path: ME, times: 1, fault: { kind: 'hang', ms: 5_000 } }]);
    await h.client({ timeoutMs: 300 }).getMe();
    expect(h.infos.map((i) => i.fault)).toEqual(['timeout', null]);

    h.reset();
    h.proxy.setPlan([{ method: 'POST', path: ITEMS, fault: { kind: 'hang', ms: 5_000 } }]);
    const error = await caught(() => h.client({ timeoutMs: 300 }).createWorkItem(h.projectKey, { kind: 'task', title: 'slow' }));
    expect(error).toMatchObject({ status: 0, fault: 'timeout', ambiguous: true, attempts: 1 });
    expect(h.proxy.requests('POST', ITEMS)).toHaveLength(1);
  });
});

describe('500: a few retries for reads only', () => {
  test('a read retried past two 500s succeeds', async () => {
    h.proxy.setPlan([{ method: 'GET', path: ME, times: 2, fault: { kind: 'status', status: 500 } }]);
    await h.client().getMe();
    expect(h.proxy.requests('GET', ME).map((r) => r.status)).toEqual([500, 500, 200]);
  });

  test('a read gives up after three retries with a code-less ApiError', async () => {
    h.proxy.setPlan([{ method: 'GET', path: ME, fault: { kind: 'status', status: 500 } }]);
    const error = await caught(() => h.client().getMe());
    expect(error).toMatchObject({ status: 500, code: null, message: 'injected internal error', attempts: 4 });
    expect(h.proxy.requests('GET', ME)).toHaveLength(4);
  });

  test('a write is not retried after a 500', async () => {
    h.proxy.setPlan([{ method: 'POST', path: ITEMS, fault: { kind: 'status', status: 500 } }]);
    const error = await caught(() => h.client().createWorkItem(h.projectKey, { kind: 'task', title: 'x' }));
    expect(error).toMatchObject({ status: 500, code: null, ambiguous: true });
    expect(h.proxy.requests('POST', ITEMS)).toHaveLength(1);
    expect(h.sleeps).toEqual([]);
  });
});

describe('answers that never change are never retried', () => {
  // Each case arranges its state directly, then makes exactly one call through the proxy.
  const cases: [string, number, string | null, RegExp, () => Promise<unknown>, number][] = [
    ['401 unknown token', 401, 'UNAUTHORIZED', ME, () => h.client({ token: `svc_pat_${'x'.repeat(32)}` }).getMe(), 3],
    [
      '403 missing scope',
      403,
      'FORBIDDEN',
      ITEMS,
      async () => {
        const readOnly = await h.tokenWithScopes(['project:browse']);
        return h.client({ token: readOnly }).createWorkItem(h.projectKey, { kind: 'task', title: 'not allowed' });
      },
      3,
    ],
    ['404 unknown item', 404, 'NOT_FOUND', /^\/api\/v1\/work-items\//, () => h.client().getWorkItem(`${h.projectKey}-999999`), 4],
    [
      '409 closing a closed run',
      409,
      'RUN_CLOSED',
      /\/close$/,
      async () => {
        const { run } = await h.direct.openDispatchRun({ projectKey: h.projectKey, command: 'run', cards: [] });
        await h.direct.closeDispatchRun(run.id, { stopReason: 'completed', status: 'succeeded' });
        return h.client().closeDispatchRun(run.id, { stopReason: 'completed', status: 'succeeded' });
      },
      1,
    ],
    [
      '412 stale If-Match',
      412,
      'PRECONDITION_FAILED',
      /^\/api\/v1\/work-items\//,
      async () => {
        const task = await h.newTask();
        const { etag } = await h.direct.getWorkItem(task.key);
        await h.direct.updateWorkItem(task.key, { title: 'moved on' });
        return h.client().updateWorkItem(task.key, { title: 'stale write' }, { ifMatch: etag ?? '"none"' });
      },
      1,
    ],
    ['422 bad cursor', 422, 'INVALID_REQUEST', ITEMS, () => h.client().listWorkItems(h.projectKey, { cursor: 'not-a-cursor' }), 2],
  ];

  test.each(cases)('%s: exactly one request', async (_name, status, code, path, call, exit) => {
    const error = await caught(call);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status, code, ambiguous: false, attempts: 1 });
    expect(exitCodeFor(error)).toBe(exit);
    const seen = h.proxy.seen.filter((r) => path.test(r.path) && r.status === status);
    expect(seen).toHaveLength(1);
    expect(h.proxy.seen.filter((r) => path.test(r.path) && r.requestId === seen[0]?.requestId)).toHaveLength(1);
    expect(h.sleeps).toEqual([]);
  });
});

/** A port nothing listens on (bound, then released). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
