// `svc server` and `svc server token create` as plain functions, the demo seed, and the
// SVC_SERVER_VALIDATE_LOG hook spawned servers use to report contract violations.
import { mkdtempSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { parseRateLimit, runServerCommand, startServer } from '../../../src/server/index.js';

const sink = () => {
  const lines: string[] = [];
  return { lines, write: (t: string) => lines.push(...t.split('\n').filter(Boolean)) };
};
const dir = mkdtempSync(join(tmpdir(), 'svc-server-'));

describe('runServerCommand serve', () => {
  test('prints the address and the demo token, answers, and stops when the signal aborts', async () => {
    const out = sink();
    const err = sink();
    const ctrl = new AbortController();
    const running = runServerCommand({ command: 'serve', seed: 'demo', rateLimit: '50/60' }, { stdout: out, stderr: err, signal: ctrl.signal });
    await expect.poll(() => out.lines.length).toBe(2);
    const [url, token] = out.lines as [string, string];
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(token).toMatch(/^svc_pat_[A-Za-z0-9]{32}$/);
    const me = await fetch(`${url}/api/v1/me`, { headers: { authorization: `Bearer ${token}` } });
    expect(me.status).toBe(200);
    expect(me.headers.get('x-ratelimit-limit')).toBe('50');
    const items = await fetch(`${url}/api/v1/projects/DEMO/work-items/count`, { headers: { authorization: `Bearer ${token}` } });
    expect(await items.json()).toEqual({ count: 10 });
    ctrl.abort();
    expect(await running).toBe(0);
    await expect(fetch(`${url}/api/v1/me`)).rejects.toThrow();
  });

  test('a port already in use (a server already running there): one line, exit 2', async () => {
    const taken = createServer();
    await new Promise<void>((done) => taken.listen(0, '127.0.0.1', done));
    const port = (taken.address() as AddressInfo).port;
    try {
      const err = sink();
      expect(await runServerCommand({ command: 'serve', port }, { stdout: sink(), stderr: err })).toBe(2);
      expect(err.lines).toEqual([`svc: 127.0.0.1:${port} is already in use (another svc server?): pass another --port, or --port 0 for a free one`]);
    } finally {
      taken.close();
    }
  });

  test.each([['600'], ['0/60'], ['10/0'], ['a/b']])('a bad --rate-limit %s is refused', (text) => {
    expect(() => parseRateLimit(text)).toThrow(/rate-limit/);
  });
});

describe('runServerCommand token create', () => {
  const db = join(dir, 'tokens.db');

  test('prints a token bound to the workspace (and project) with the given scopes', async () => {
    const seeded = await startServer({ dbFile: db, seed: 'demo' });
    await seeded.close();
    const out = sink();
    const code = await runServerCommand(
      { command: 'token-create', db, workspace: 'acme', project: 'DEMO', scopes: ['project:browse'] },
      { stdout: out, stderr: sink() },
    );
    expect(code).toBe(0);
    const token = out.lines[0]!;
    expect(token).toMatch(/^svc_pat_/);
    const again = await startServer({ dbFile: db });
    try {
      const me = await fetch(`${again.url}/api/v1/me`, { headers: { authorization: `Bearer ${token}` } });
      expect(((await me.json()) as { permissions: string[] }).permissions).toEqual(['project:browse']);
    } finally {
      await again.close();
    }
  });

  test.each([
    ['unknown workspace', { workspace: 'nope' }, 4, /^svc: no workspace 'nope' in .*svc server init/],
    ['unknown project', { workspace: 'acme', project: 'NOPE' }, 4, /^svc: no project/],
    ['unknown scope', { workspace: 'acme', scopes: ['admin:all'] }, 2, /^svc: unknown scope/],
    ['unknown user', { workspace: 'acme', user: 'who@nowhere' }, 4, /^svc: no member/],
    ['unknown scope in the flag text', { workspace: 'acme', scopes: 'project:browse, nope' }, 2, /^svc: unknown scope nope/],
  ])('%s exits %i with one svc: line', async (_n, over, exit, message) => {
    const err = sink();
    const code = await runServerCommand({ command: 'token-create', db, ...over }, { stdout: sink(), stderr: err });
    expect(code).toBe(exit);
    expect(err.lines.join('\n')).toMatch(message);
  });
});

describe('SVC_SERVER_VALIDATE_LOG', () => {
  afterEach(() => {
    delete process.env.SVC_SERVER_VALIDATE_LOG;
  });

  test('appends one JSON line per violation of the document, nothing for valid answers', async () => {
    const log = join(dir, 'violations.jsonl');
    process.env.SVC_SERVER_VALIDATE_LOG = log;
    const svc = await startServer({ seed: 'demo' });
    try {
      const auth = { authorization: `Bearer ${svc.seeded!.token}`, 'content-type': 'application/json' };
      expect((await fetch(`${svc.url}/api/v1/me`, { headers: auth })).status).toBe(200);
      expect(existsSync(log)).toBe(false);
      // A priority outside the document's enum, planted in the store, makes the read break it.
      svc.db.prepare("UPDATE work_items SET priority = 'urgent' WHERE key = 'DEMO-1'").run();
      expect((await fetch(`${svc.url}/api/v1/work-items/DEMO-1`, { headers: auth })).status).toBe(200);
      const lines = readFileSync(log, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { operationId: string; status: number; message: string });
      expect(lines.length).toBeGreaterThan(0);
      expect(lines[0]).toMatchObject({ operationId: 'getWorkItem', status: 200, message: expect.any(String) });
    } finally {
      await svc.close();
    }
  });
});

describe('the demo seed', () => {
  test('a realistic tree: blocked subtask, bug with subtask, a done item, a human item', async () => {
    const svc = await startServer({ seed: 'demo' });
    try {
      const get = async (path: string) =>
        (await fetch(`${svc.url}/api/v1${path}`, { headers: { authorization: `Bearer ${svc.seeded!.token}` } })).json() as Promise<Record<string, any>>;
      expect((await get('/work-items/DEMO-4')).readiness.openBlockers.map((b: { key: string }) => b.key)).toEqual(['DEMO-3']);
      expect((await get('/work-items/DEMO-1')).children.map((c: { kind: string }) => c.kind)).toEqual(['story']);
      expect((await get('/work-items/DEMO-9')).statusCategory).toBe('done');
      expect((await get('/work-items/DEMO-10')).executor).toBe('human');
      expect((await get('/projects/DEMO/ready/containers')).items[0].key).toBe('DEMO-2');
      expect((await get('/projects/DEMO/ready/bugs')).items[0].container.key).toBe('DEMO-7');
      expect((await get('/me')).permissions).toHaveLength(4);
    } finally {
      await svc.close();
    }
  });
});
