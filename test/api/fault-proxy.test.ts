// The fault proxy's own triggers: a plan must replay exactly, or a flaky wire test could not be
// told from a flaky client.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createApiClient } from '../../src/api/index.js';
import { startFaultProxy, type FaultRule } from '../support/fault-proxy.js';
import { startTestService, type TestService } from '../support/service.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => {
  await service?.close();
});

/** Status per call of `calls` GET /me through a fresh proxy with `plan` (404s are never retried). */
async function statuses(plan: FaultRule[], calls: number, seed = 7): Promise<(number | null)[]> {
  const proxy = await startFaultProxy({ target: service.url, plan, seed });
  const api = createApiClient({ baseUrl: proxy.url, token: service.token });
  try {
    for (let i = 0; i < calls; i++) await api.getMe().catch(() => undefined);
    return proxy.seen.map((r) => r.status);
  } finally {
    await api.close();
    await proxy.close();
  }
}

const notFound = { kind: 'status', status: 404 } as const;

test.each([
  ['nth picks occurrences', [{ path: /\/me$/, nth: [2, 4], fault: notFound }], [200, 404, 200, 404, 200]],
  ['times takes the first N', [{ path: /\/me$/, times: 2, fault: notFound }], [404, 404, 200, 200, 200]],
  ['method narrows the match', [{ method: 'POST', path: /\/me$/, fault: notFound }], [200, 200, 200, 200, 200]],
  [
    'the first rule that fires wins',
    [
      { path: /\/me$/, nth: 1, fault: notFound },
      { path: /\/me$/, fault: { kind: 'status', status: 403 } },
    ],
    [404, 403, 403, 403, 403],
  ],
] satisfies [string, FaultRule[], number[]][])('%s', async (_name, plan, expected) => {
  expect(await statuses(plan, 5)).toEqual(expected);
});

test('probability replays for a seed and differs across seeds', async () => {
  const plan: FaultRule[] = [{ path: /\/me$/, probability: 0.5, fault: notFound }];
  const a = await statuses(plan, 24, 7);
  const b = await statuses(plan, 24, 7);
  const c = await statuses(plan, 24, 8);
  expect(a).toEqual(b);
  expect(a).toContain(404);
  expect(a).toContain(200);
  expect(c).not.toEqual(a);
});
