// The HTTP layer every operation shares: the headers on every response, the undifferentiated 401, 403 on a
// missing scope, 404 for unknown paths, body limits, the 500 body and the rate limit.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { OPERATIONS } from '../../../src/contract/operations.js';
import { API_VERSION } from '../../../src/contract/types.js';
import { startTestService, type TestService } from '../../support/service.js';

let s: TestService;
beforeAll(async () => {
  s = await startTestService();
  s.admin.createWorkItem({ projectKey: s.projectKey, kind: 'task', title: 'one' });
});
afterAll(() => s.close());

const expectSection8 = (h: Record<string, string>) => {
  expect(h['x-request-id']).toMatch(/^[A-Za-z0-9._-]{1,128}$/);
  expect(h['x-svc-api-version']).toBe(API_VERSION);
  expect(h['x-ratelimit-limit']).toMatch(/^\d+$/);
  expect(h['x-ratelimit-remaining']).toMatch(/^\d+$/);
  expect(h['x-ratelimit-reset']).toMatch(/^\d+$/);
  expect(h['retry-after']).toBeUndefined();
};

describe('the headers on every response', () => {
  test.each([
    ['success', 'GET', '/me', undefined],
    ['401', 'GET', '/me', null],
    ['404', 'GET', '/nowhere', undefined],
    ['422', 'GET', '/projects?limit=0', undefined],
  ])('are on every response (%s)', async (_name, method, path, token) => {
    const r = await s.call(method, path, { token });
    expectSection8(r.headers);
  });

  test('a valid X-Request-Id is echoed; an invalid one is replaced', async () => {
    const ok = await s.call('GET', '/me', { headers: { 'x-request-id': 'abc.DEF_123-x' } });
    expect(ok.headers['x-request-id']).toBe('abc.DEF_123-x');
    const bad = await s.call('GET', '/me', { headers: { 'x-request-id': 'has space!' } });
    expect(bad.headers['x-request-id']).not.toBe('has space!');
    const long = await s.call('GET', '/me', { headers: { 'x-request-id': 'a'.repeat(129) } });
    expect(long.headers['x-request-id']).not.toBe('a'.repeat(129));
  });
});

describe('401 is undifferentiated', () => {
  const cases: [string, () => string | null, Record<string, string>?][] = [
    ['no token', () => null],
    ['malformed token', () => 'not-a-token'],
    ['wrong prefix', () => `svc_xyz_${'a'.repeat(32)}`],
    ['unknown token', () => `svc_pat_${'A'.repeat(32)}`],
    [
      'revoked token',
      () => {
        const t = s.admin.createToken({ workspaceId: s.workspaceId, userId: s.userId });
        s.admin.revokeToken(t.id);
        return t.token;
      },
    ],
    ['expired token', () => s.admin.createToken({ workspaceId: s.workspaceId, userId: s.userId, expiresAt: '2000-01-01T00:00:00Z' }).token],
    [
      'owner no longer a member',
      () => {
        const u = s.admin.createUser({ name: 'Gone', email: `gone-${Math.random()}@x.test` });
        s.admin.addMember(s.workspaceId, u.id);
        const t = s.admin.createToken({ workspaceId: s.workspaceId, userId: u.id }).token;
        s.admin.removeMember(s.workspaceId, u.id);
        return t;
      },
    ],
    ['unknown run credential', () => `svc_run_${'B'.repeat(32)}`],
  ];
  test.each(cases)('%s', async (_name, token) => {
    const r = await s.call('GET', '/me', { token: token() });
    expect(r.status).toBe(401);
    expect(r.body).toEqual({ error: 'authentication required', code: 'UNAUTHORIZED' });
  });

  test('a non-Bearer scheme is a 401', async () => {
    const r = await s.call('GET', '/me', { token: null, headers: { authorization: `Basic ${s.token}` } });
    expect(r.status).toBe(401);
  });
});

describe('403 when the token lacks the permission', () => {
  const mine = OPERATIONS.filter((o) => [1, 2, 3, 4, 5, 6, 7, 8, 9, 23, 24].includes(o.n));
  test.each(mine.map((o) => [o.n, o.id, o.method, o.path, o.permission] as const))('op %i %s', async (_n, _id, method, path, permission) => {
    const others = (['project:browse', 'work_item:edit', 'sprint:manage', 'ai:plan'] as const).filter((x) => x !== permission);
    const token = s.admin.createToken({ workspaceId: s.workspaceId, userId: s.userId, scopes: others }).token;
    const concrete = path.replace('{projectKey}', s.projectKey).replace('{key}', `${s.projectKey}-1`);
    const r = await s.call(method, concrete, { token, body: method === 'GET' ? undefined : { title: 'x' } });
    expect(r.status).toBe(403);
    expect(r.body.code).toBe('FORBIDDEN');
  });
});

describe('paths', () => {
  test.each([
    ['unknown path', 'GET', '/nowhere'],
    ['outside /api/v1', 'GET', '/../elsewhere'],
    ['wrong method on a known path', 'DELETE', '/me'],
    ['a key that does not match the key pattern', 'GET', '/work-items/proj-1'],
    ['a key with no number', 'GET', '/work-items/PROJ-'],
  ])('%s is 404 NOT_FOUND', async (_name, method, path) => {
    const r = await s.call(method, path);
    expect(r.status).toBe(404);
    expect(r.body.code).toBe('NOT_FOUND');
  });

  test('the OpenAPI document is served without auth', async () => {
    const res = await fetch(`${s.url}/api/openapi/v1.json`);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as { info: { version: string }; paths: Record<string, unknown> };
    expect(doc.info.version).toBe(API_VERSION);
    expect(res.headers.get('x-svc-api-version')).toBe(doc.info.version);
    expect(Object.keys(doc.paths).length).toBeGreaterThan(10);
  });
});

describe('request bodies', () => {
  test('invalid JSON is 422 INVALID_REQUEST', async () => {
    const r = await s.call('POST', `/projects/${s.projectKey}/work-items`, { raw: '{"kind": "task",' });
    expect(r.status).toBe(422);
    expect(r.body.code).toBe('INVALID_REQUEST');
  });

  test('a body over 1 MiB is refused with a status the operation documents: 422, or 413 on the event append', async () => {
    const r = await s.call('POST', `/projects/${s.projectKey}/work-items`, {
      body: { kind: 'task', title: 'big', descriptionMd: 'x'.repeat(1024 * 1024 + 10) },
    });
    expect(r.status).toBe(422);
    expect(r.body).toEqual({ code: 'INVALID_REQUEST', error: expect.stringMatching(/request body too large/) });
    expectSection8(r.headers);
    const run = await s.call('POST', '/dispatch-runs', { body: { projectKey: s.projectKey, command: 'run', cards: [] } });
    const append = await s.call('POST', `/dispatch-runs/${run.body.run.id}/events`, { body: { events: [{ body: 'y'.repeat(1024 * 1024) }] } });
    expect(append.status).toBe(413);
    expect(append.body.code).toBe('PAYLOAD_TOO_LARGE');
    expectSection8(append.headers);
  });

  test('an operation without a request body ignores one (no 422 for non-JSON on heartbeat)', async () => {
    const run = await s.call('POST', '/dispatch-runs', { body: { projectKey: s.projectKey, command: 'run', cards: [] } });
    const r = await s.call('POST', `/dispatch-runs/${run.body.run.id}/heartbeat`, { raw: '{"not json' });
    expect(r.status).toBe(204);
  });

  test('a body failing the document is 422 with a one-line message naming the field', async () => {
    const r = await s.call('POST', `/projects/${s.projectKey}/work-items`, { body: { kind: 'task', title: 'x', bogus: 1 } });
    expect(r.status).toBe(422);
    expect(r.body.code).toBe('INVALID_REQUEST');
    expect(r.body.error).toMatch(/bogus/);
    expect(r.body.error).not.toMatch(/\n/);
  });
});

test('an unexpected fault is a 500 with {error, requestId}, no code and no stack', async () => {
  const logged: string[] = [];
  const t = await startTestService({ logError: (l) => logged.push(l) });
  try {
    t.admin.createWorkItem({ projectKey: t.projectKey, kind: 'task', title: 'x' });
    t.db.exec('DROP TABLE work_item_links');
    const r = await t.call('GET', `/work-items/${t.projectKey}-1`, { headers: { 'x-request-id': 'req-500' } });
    expect(r.status).toBe(500);
    expect(r.body).toEqual({ error: 'internal error', requestId: 'req-500' });
    expectSection8(r.headers);
    expect(logged.join('\n')).toMatch(/work_item_links/);
  } finally {
    await t.close();
  }
});

describe('rate limit', () => {
  test('Remaining counts down to 0, then 429 RATE_LIMITED with the headers', async () => {
    const t = await startTestService({ config: { rateLimit: 3, rateWindowMs: 60_000 } });
    try {
      const seen: string[] = [];
      for (let i = 0; i < 3; i++) {
        const r = await t.call('GET', '/me');
        expect(r.status).toBe(200);
        seen.push(r.headers['x-ratelimit-remaining']!);
      }
      expect(seen).toEqual(['2', '1', '0']);
      const limited = await t.call('GET', '/me');
      expect(limited.status).toBe(429);
      expect(limited.body.code).toBe('RATE_LIMITED');
      expect(limited.headers['x-ratelimit-limit']).toBe('3');
      expect(limited.headers['x-ratelimit-remaining']).toBe('0');
      expect(Number(limited.headers['x-ratelimit-reset'])).toBeGreaterThan(Date.now() / 1000);
      expect(limited.headers['retry-after']).toBeUndefined();
      // Another token has its own budget.
      const other = t.admin.createToken({ workspaceId: t.workspaceId, userId: t.userId }).token;
      expect((await t.call('GET', '/me', { token: other })).status).toBe(200);
    } finally {
      await t.close();
    }
  });

  test("requests without a valid token spend a per-address budget, not a token's", async () => {
    const t = await startTestService({ config: { rateLimit: 2, rateWindowMs: 60_000 } });
    try {
      const anon = [await t.call('GET', '/me', { token: null }), await t.call('GET', '/me', { token: 'bad' })];
      expect(anon.map((r) => [r.status, r.headers['x-ratelimit-remaining']])).toEqual([
        [401, '1'],
        [401, '0'],
      ]);
      const limited = await t.call('GET', '/me', { token: null });
      expect(limited.status).toBe(429);
      expect(limited.body.code).toBe('RATE_LIMITED');
      const ok = await t.call('GET', '/me');
      expect([ok.status, ok.headers['x-ratelimit-remaining']]).toEqual([200, '1']);
    } finally {
      await t.close();
    }
  });

  test('the window resets at X-RateLimit-Reset', async () => {
    let now = Date.parse('2030-01-01T00:00:00Z');
    const t = await startTestService({ config: { rateLimit: 1, rateWindowMs: 10_000 }, now: () => new Date(now) });
    try {
      const first = await t.call('GET', '/me');
      expect(first.status).toBe(200);
      expect((await t.call('GET', '/me')).status).toBe(429);
      now = Number(first.headers['x-ratelimit-reset']) * 1000;
      expect((await t.call('GET', '/me')).status).toBe(200);
    } finally {
      await t.close();
    }
  });
});
