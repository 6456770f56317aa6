// Request bodies over real HTTP: the service reads (or drains) the body before it answers, on every
// path, so an answer is never cut off by a connection reset; an operation the document gives no
// body ignores whatever comes; an oversized body is refused with a status the operation documents.
import { Agent, createServer, request, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { consumeBody, MAX_BODY_BYTES, type ConsumedBody } from '../../../src/server/http-body.js';
import { mintRunCredential } from '../../../src/server/dispatch-runs/index.js';
import { startTestService, type TestService } from '../../support/service.js';

let s: TestService;
const agent = new Agent({ keepAlive: true, maxSockets: 1 });

beforeAll(async () => {
  s = await startTestService();
});
afterAll(async () => {
  agent.destroy();
  await s.close();
});

interface RawAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** The request went over a connection an earlier request had used (keep-alive held). */
  reused: boolean;
}

/** One request with an arbitrary body (any method), sent raw: no client ever drops a GET body. */
function raw(method: string, path: string, body?: Buffer | string, headers: Record<string, string> = {}): Promise<RawAnswer> {
  const url = new URL(s.url);
  const payload = body === undefined ? undefined : Buffer.from(body);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        agent,
        host: url.hostname,
        port: url.port,
        method,
        path: `/api/v1${path}`,
        headers: {
          authorization: `Bearer ${s.token}`,
          'content-type': 'application/json',
          ...headers,
          ...(payload ? { 'content-length': String(payload.length) } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text: Buffer.concat(chunks).toString('utf8'), reused: req.reusedSocket }));
        res.on('error', reject);
        res.on('aborted', () => reject(new Error('aborted')));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

describe('the body is consumed before the answer', () => {
  test('a GET with a 400 KB body gets its whole ~480 KB answer, every time (it was reset 20/20)', async () => {
    for (let i = 0; i < 60; i++) s.admin.createWorkItem({ projectKey: s.projectKey, kind: 'task', title: `wide ${i} ${'x'.repeat(8000)}` });
    const outcomes: string[] = [];
    for (let k = 0; k < 5; k++) {
      const a = await raw('GET', `/projects/${s.projectKey}/backlog?limit=100`, Buffer.alloc(400_000, '[')).then(
        (x) => `${x.status} ${x.text.length > 400_000 ? 'whole' : `short ${x.text.length}`} ${x.headers.connection}`,
        (e: unknown) => String(e),
      );
      outcomes.push(a);
    }
    expect(outcomes).toEqual(Array(5).fill('200 whole keep-alive'));
  });

  test.each([
    ['401 (no token)', 'GET', '/me', { authorization: '' }, 401],
    ['404 (unknown path)', 'GET', '/nowhere', {}, 404],
    ['404 (wrong method)', 'DELETE', '/me', {}, 404],
    ['403 (missing permission)', 'POST', '/projects/PROJ/work-items', 'browse-only', 403],
    ['422 (bad cursor, a GET)', 'GET', '/projects?cursor=nope', {}, 422],
    ['200 (a DELETE of a folder)', 'DELETE', '/folders/{folder}', {}, 200],
  ] as const)('%s: answered after the body, the connection kept open', async (_name, method, path, extra, status) => {
    let headers: Record<string, string> =
      extra === 'browse-only'
        ? { authorization: `Bearer ${s.admin.createToken({ workspaceId: s.workspaceId, userId: s.userId, scopes: ['project:browse'] }).token}` }
        : { ...extra };
    if (headers.authorization === '') headers = { authorization: 'Bearer nope' };
    let concrete: string = path;
    if (path.includes('{folder}')) {
      const folder = await s.call('POST', `/projects/${s.projectKey}/folders`, { body: { name: `f-${Math.random()}` } });
      concrete = path.replace('{folder}', folder.body.id as string);
    }
    await raw('GET', '/me');
    const a = await raw(method, concrete, Buffer.alloc(300_000, 'x'), headers);
    expect(a.status).toBe(status);
    expect(a.headers.connection).toBe('keep-alive');
    // The next request rides the same connection: nothing of the body was left in it.
    const next = await raw('GET', '/me');
    expect([next.status, next.reused]).toEqual([200, true]);
  });
});

describe('statuses the document lists for a body', () => {
  const big = (field: string) => JSON.stringify({ kind: 'task', title: 'big', [field]: 'x'.repeat(MAX_BODY_BYTES + 10) });

  test('a body over 1 MiB on an operation that does not list 413 is 422 INVALID_REQUEST', async () => {
    const a = await raw('POST', `/projects/${s.projectKey}/work-items`, big('descriptionMd'));
    expect(a.status).toBe(422);
    expect(JSON.parse(a.text)).toEqual({ code: 'INVALID_REQUEST', error: expect.stringMatching(/request body too large/) });
    expect(a.headers.connection).toBe('keep-alive');
    const patch = await raw('PATCH', `/work-items/${s.projectKey}-1`, big('title'));
    expect(patch.status).toBe(422);
  });

  test('a body over 1 MiB on the event append (appendDispatchEvents, which lists 413) is 413 PAYLOAD_TOO_LARGE', async () => {
    const run = await s.call('POST', '/dispatch-runs', { body: { projectKey: s.projectKey, command: 'run', cards: [] } });
    expect(run.status).toBe(201);
    const events = JSON.stringify({ events: [{ body: 'y'.repeat(MAX_BODY_BYTES) }] });
    const a = await raw('POST', `/dispatch-runs/${run.body.run.id as string}/events`, events);
    expect(a.status).toBe(413);
    expect(JSON.parse(a.text).code).toBe('PAYLOAD_TOO_LARGE');
    expect(a.headers.connection).toBe('keep-alive');
  });

  test('a body of exactly 1 MiB is read and validated, not refused for its size', async () => {
    const text = JSON.stringify({ kind: 'task', title: 'exact', descriptionMd: '' });
    const padded = text.slice(0, -1) + ' '.repeat(MAX_BODY_BYTES - text.length) + '}';
    expect(Buffer.byteLength(padded)).toBe(MAX_BODY_BYTES);
    const a = await raw('POST', `/projects/${s.projectKey}/work-items`, padded);
    expect(a.status).toBe(201);
  });

  test('heartbeat (heartbeatDispatchRun) takes no body: any body, JSON or not, small or over 1 MiB, is ignored', async () => {
    const run = await s.call('POST', '/dispatch-runs', { body: { projectKey: s.projectKey, command: 'run', cards: [] } });
    const id = run.body.run.id as string;
    for (const body of ['{not json', '[1,2', 'x'.repeat(MAX_BODY_BYTES + 100), '{"anything": true}']) {
      const a = await raw('POST', `/dispatch-runs/${id}/heartbeat`, body);
      expect([a.status, a.text]).toEqual([204, '']);
    }
  });

  test('git-credential (getGitCredential) takes no body: a non-JSON body answers as no body does', async () => {
    const run = await s.call('POST', '/dispatch-runs', { body: { projectKey: s.projectKey, command: 'run', origin: 'hosted', cards: [] } });
    const id = run.body.run.id as string;
    const runToken = mintRunCredential(s.db, id);
    for (const token of [s.token, runToken]) {
      const without = await raw('POST', `/dispatch-runs/${id}/git-credential`, undefined, { authorization: `Bearer ${token}` });
      const withJunk = await raw('POST', `/dispatch-runs/${id}/git-credential`, '{not json', { authorization: `Bearer ${token}` });
      expect(withJunk.status).toBe(without.status);
      expect(withJunk.status).not.toBe(422);
    }
  });
});

describe('consumeBody', () => {
  async function withServer(handle: (req: import('node:http').IncomingMessage) => Promise<ConsumedBody>, send: (port: number) => Promise<void>) {
    const got: ConsumedBody[] = [];
    const server = createServer((req, res) => {
      void handle(req).then((r) => {
        got.push(r);
        res.writeHead(200, { connection: r.complete ? 'keep-alive' : 'close' }).end();
        if (!r.complete) req.resume();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      await send((server.address() as AddressInfo).port);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
    return got;
  }
  /** A POST of `body`, with its length declared or (chunked) not. */
  const post = (port: number, body: Buffer, declared = true) =>
    new Promise<void>((resolve, reject) => {
      const headers = declared ? { 'content-length': String(body.length) } : { 'transfer-encoding': 'chunked' };
      const req = request({ host: '127.0.0.1', port, method: 'POST', headers }, (res) => {
        res.resume();
        res.on('end', resolve);
      });
      req.on('error', () => resolve()); // the server may close before the upload ends
      req.on('timeout', reject);
      req.end(body);
    });

  test('keeps at most `keep` bytes, reads to the end, and says whether it went over', async () => {
    const got = await withServer(
      (req) => consumeBody(req, 10),
      async (port) => {
        await post(port, Buffer.from('0123456789'));
        await post(port, Buffer.from('0123456789abcdef'));
        await post(port, Buffer.alloc(0));
      },
    );
    expect(got.map((g) => [g.bytes.toString(), g.size, g.over, g.complete, g.gone])).toEqual([
      ['0123456789', 10, false, true, false],
      ['0123456789', 16, true, true, false],
      ['', 0, false, true, false],
    ]);
  });

  test('stops reading past the drain limit, or at once when the declared length is past it', async () => {
    const got = await withServer(
      (req) => consumeBody(req, 4, 64 * 1024),
      async (port) => {
        await post(port, Buffer.alloc(256 * 1024, 'z'), false);
        await post(port, Buffer.alloc(256 * 1024, 'z'));
      },
    );
    expect(got.map((g) => [g.bytes.toString(), g.over, g.complete, g.gone])).toEqual([
      ['zzzz', true, false, false],
      ['', true, false, false],
    ]);
    expect(got[0]!.size).toBeGreaterThan(64 * 1024);
    expect(got[1]!.size).toBe(256 * 1024);
  });
});
