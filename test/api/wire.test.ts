// What every request carries, what the client never leaks, paging, and how parameters are encoded,
// all asserted on what the fault proxy saw in front of the real local service.
import { beforeEach, describe, expect, test } from 'vitest';
import { ApiError, collectAll, createApiClient, paginate, paginatePages } from '../../src/api/index.js';
import { REQUEST_ID_PATTERN, type WorkItemSummary } from '../../src/contract/types.js';
import { caught, harnessForFile } from './harness.js';

const h = harnessForFile();
beforeEach(() => h.reset());

describe('headers', () => {
  test('every call carries a fresh X-Request-Id; its retries share it', async () => {
    const api = h.client();
    await api.getMe();
    await api.getMe();
    await api.listProjects();
    h.proxy.setPlan([{ method: 'GET', path: /\/me$/, times: 2, fault: { kind: 'status', status: 503 } }]);
    await api.getMe();
    const ids = h.proxy.seen.map((r) => r.requestId);
    expect(ids.every((id) => id !== null && REQUEST_ID_PATTERN.test(id))).toBe(true);
    expect(new Set(ids.slice(0, 3)).size).toBe(3);
    expect(new Set(ids.slice(3))).toEqual(new Set([ids[3]]));
    expect(ids.slice(0, 3)).not.toContain(ids[3]);
    // The service echoes it; the client reports the echo.
    expect(h.infos.map((i) => i.requestId)).toEqual(ids);
  });

  test.each([
    ['a read', 'GET', async () => h.client().getMe(), undefined],
    ['a write with a body', 'POST', async () => h.client().createWorkItem(h.projectKey, { kind: 'task', title: 'headers' }), 'application/json'],
  ])('%s: bearer auth, JSON accept, user agent, content type only with a body', async (_name, method, call, contentType) => {
    await call();
    const [seen] = h.proxy.seen;
    expect(seen).toMatchObject({ method, auth: 'bearer' });
    expect(seen?.headers).toMatchObject({ accept: 'application/json', 'user-agent': 'svc/test' });
    expect(seen?.headers['content-type']).toBe(contentType);
  });

  test('If-Match is sent only when given, and a fresh ETag passes it', async () => {
    const task = await h.newTask();
    const { etag } = await h.client().getWorkItem(task.key);
    expect(etag).toBeTruthy();
    const updated = await h.client().updateWorkItem(task.key, { title: 'renamed' }, { ifMatch: etag! });
    expect(updated.item.title).toBe('renamed');
    await h.client().updateWorkItem(task.key, { title: 'renamed again' });
    const patches = h.proxy.requests('PATCH');
    expect(patches.map((r) => r.headers['if-match'])).toEqual([etag, undefined]);
  });
});

describe('the token never leaks', () => {
  test('not in errors, messages or onRequest info', async () => {
    h.proxy.setPlan([
      { method: 'GET', path: /\/me$/, fault: { kind: 'status', status: 401, body: JSON.stringify({ error: `bad token ${h.token}`, code: 'UNAUTHORIZED' }) } },
    ]);
    const error = await caught(() => h.client().getMe());
    expect(error).toBeInstanceOf(ApiError);
    const visible = JSON.stringify({ error, message: (error as Error).message, stack: (error as Error).stack, infos: h.infos });
    expect(visible).not.toContain(h.token);
    expect((error as Error).message).toContain('[REDACTED]');
    // The proxy records only the scheme, too.
    expect(JSON.stringify(h.proxy.seen)).not.toContain(h.token);
  });
});

describe('paging', () => {
  test('paginate walks every page by nextCursor, in order, without duplicates', async () => {
    for (let i = 0; i < 7; i++) await h.newTask(`paged ${i}`);
    const { count } = await h.direct.countWorkItems(h.projectKey);
    h.reset();
    const api = h.client();
    const items = await collectAll((cursor) => api.listWorkItems(h.projectKey, { cursor, limit: 3 }));
    expect(items).toHaveLength(count);
    expect(new Set(items.map((i) => i.key)).size).toBe(count);
    const order = items.map((i: WorkItemSummary) => i.createdAt);
    expect(order).toEqual([...order].sort());
    const calls = h.proxy.requests('GET', /\/work-items$/);
    expect(calls.length).toBeGreaterThanOrEqual(Math.ceil(count / 3));
    expect(calls[0]?.query).toBe('?limit=3');
    expect(calls.slice(1).every((r) => /^\?cursor=[^&]+&limit=3$/.test(r.query))).toBe(true);
  });

  test('maxItems stops without fetching further pages', async () => {
    const api = h.client();
    const first = [];
    for await (const item of paginate((cursor) => api.listWorkItems(h.projectKey, { cursor, limit: 2 }), { maxItems: 3 })) first.push(item);
    expect(first).toHaveLength(3);
    expect(h.proxy.requests('GET', /\/work-items$/)).toHaveLength(2);
  });

  test('a cursor repeated by a broken service stops the walk instead of looping', async () => {
    const page = { items: [1], nextCursor: 'same' };
    const walk = async () => {
      for await (const _ of paginatePages(async () => page)) void _;
    };
    await expect(walk()).rejects.toThrow(/did not advance/);
  });
});

describe('parameters', () => {
  test('ready-lane filters are repeated query parameters', async () => {
    await h.client().listReadyBugs(h.projectKey, { kind: ['bug', 'subtask'], priority: ['high', 'low'], limit: 5 });
    expect(h.proxy.seen[0]?.query).toBe('?kind=bug&kind=subtask&priority=high&priority=low&limit=5');
    expect(h.proxy.seen[0]?.status).toBe(200);
  });

  test('path parameters are URL-encoded', async () => {
    const error = await caught(() => h.client().getFolder('a/b c?d'));
    expect(error).toMatchObject({ status: 404 });
    expect(h.proxy.seen.map((r) => r.path)).toEqual(['/api/v1/folders/a%2Fb%20c%3Fd']);
  });

  test('an empty path parameter is refused before any request', async () => {
    await expect(h.client().getWorkItem('')).rejects.toMatchObject({ name: 'ClientConfigError', problem: 'argument' });
    expect(h.proxy.seen).toEqual([]);
  });

  test('a hosted run credential reads its own run', async () => {
    const { run } = await h.direct.openDispatchRun({ projectKey: h.projectKey, command: 'run', origin: 'hosted', cards: [] });
    const api = createApiClient({ baseUrl: h.proxy.url, token: h.mintRunCredential(run.id), credentialKind: 'run' });
    try {
      expect((await api.getDispatchRun(run.id)).id).toBe(run.id);
    } finally {
      await api.close();
    }
  });
});
