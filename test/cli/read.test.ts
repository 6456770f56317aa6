// The read and write commands against the seeded local service, the command line run in-process and
// piped (tab-separated rows; tables on a terminal are test/ui/progress.test.ts's). `items edit` is watched on the
// wire through the fault proxy: it sends If-Match from its own read, and a change made between its
// read and its write becomes the one-line explanation of a 412.
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { isolatedEnv, makeRepo, type CliEnv } from '../support/cli.js';
import { startSvc, svcInProcess } from '../support/svc-in-process.js';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.js';
import { startLocalServer, type LocalServer } from '../support/server-process.js';

let server: LocalServer;
let env: CliEnv;
let me: { user: { id: string }; workspaceId: string };
const printed: string[] = [];

async function svc(args: string[], extra: CliEnv = {}, input?: string) {
  const r = await svcInProcess(args, { env: { ...env, ...extra }, input });
  printed.push(r.stdout, r.stderr);
  return r;
}
const rows = (stdout: string) =>
  stdout
    .trimEnd()
    .split('\n')
    .map((l) => l.split('\t'));
const item = async (key: string) => JSON.parse((await svc(['items', 'show', key, '--json'])).stdout) as Record<string, unknown>;

beforeAll(async () => {
  server = await startLocalServer();
  env = isolatedEnv({ SVC_BASE_URL: server.url, SVC_TOKEN: server.token, SVC_PROJECT: 'DEMO' });
  me = JSON.parse((await svc(['whoami', '--json'])).stdout) as typeof me;
});

afterAll(async () => {
  const violations = await server?.stop();
  expect(violations, 'responses that break the contract document').toEqual([]);
  for (const t of printed) expect(t).not.toContain(server.token);
});

describe('identity and projects', () => {
  test('whoami: the user, then the ids and scopes', async () => {
    const r = await svc(['whoami']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      `Ada Demo <ada@acme.test>\nuser ${me.user.id} · workspace ${me.workspaceId} · scopes project:browse, work_item:edit, sprint:manage, ai:plan\n`,
    );
  });

  test('workspaces and projects: one tab-separated row each, no header, piped', async () => {
    expect((await svc(['workspaces'])).stdout).toBe(`${me.workspaceId}\tacme\tAcme\n`);
    expect((await svc(['projects'])).stdout).toBe('DEMO\tworkspace\tno\tDemo shop\n');
  });

  test('projects show KEY', async () => {
    expect((await svc(['projects', 'show', 'DEMO'])).stdout).toBe('DEMO  Demo shop\naccess workspace\n');
    const missing = await svc(['projects', 'show', 'NOPE']);
    expect(missing.code).toBe(4);
    expect(missing.stderr.trim().split('\n')).toHaveLength(1);
  });
});

describe('items', () => {
  test('list: every item, one row each, in key order', async () => {
    const r = await svc(['items', 'list']);
    expect(r.code).toBe(0);
    expect(rows(r.stdout).map((c) => c[0])).toEqual(['DEMO-1', 'DEMO-2', 'DEMO-3', 'DEMO-4', 'DEMO-5', 'DEMO-6', 'DEMO-7', 'DEMO-8', 'DEMO-9', 'DEMO-10']);
    expect(rows(r.stdout)[0]).toEqual(['DEMO-1', 'epic', 'todo', 'high', 'Checkout revamp']);
  });

  test.each([
    ['kind:subtask', ['DEMO-3', 'DEMO-4', 'DEMO-5', 'DEMO-8']],
    ['kind:task -status:done', ['DEMO-6', 'DEMO-10']],
    ['priority:high,highest', ['DEMO-1', 'DEMO-2', 'DEMO-7']],
  ])('list --filter %j', async (filter, keys) => {
    const r = await svc(['items', 'list', '--filter', filter]);
    expect(r.code, r.stderr).toBe(0);
    expect(rows(r.stdout).map((c) => c[0])).toEqual(keys);
    expect((await svc(['items', 'count', '--filter', filter])).stdout).toBe(`${keys.length}\n`);
  });

  test('list --limit stops early; a bad filter is a usage error (exit 2)', async () => {
    expect(rows((await svc(['items', 'list', '--limit', '3'])).stdout)).toHaveLength(3);
    const bad = await svc(['items', 'list', '--filter', 'colour:red']);
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
  });

  test('show: the item in full', async () => {
    const r = await svc(['items', 'show', 'DEMO-2']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      ['DEMO-2  Guest checkout', 'story/code · todo · high', 'under DEMO-1', 'ready: yes', 'children: DEMO-3 [todo], DEMO-4 [todo], DEMO-5 [todo]', ''].join(
        '\n',
      ),
    );
    expect((await svc(['items', 'show', 'DEMO-4'])).stdout).toMatch(/^ready: no \(blocked by DEMO-3\)$/m);
  });

  test.each([
    [['items', 'show', 'demo-2'], 2],
    [['items', 'show', 'DEMO-999'], 4],
    [['items', 'list'], 2],
  ])('%j → exit %i, one line', async (args, code) => {
    const r = await svc(args, args[1] === 'list' ? { SVC_PROJECT: undefined } : {});
    expect(r.code).toBe(code);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });

  test('create prints the new key on stdout, and says so on stderr', async () => {
    const r = await svc(['items', 'create', '--kind', 'subtask', '--title', 'Retry the payment call', '--parent', 'DEMO-2', '--priority', 'high']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^DEMO-\d+\n$/);
    const key = r.stdout.trim();
    expect(r.stderr).toBe(`Created ${key}: Retry the payment call\n`);
    expect(await item(key)).toMatchObject({ kind: 'subtask', parentKey: 'DEMO-2', priority: 'high', title: 'Retry the payment call' });
  });

  test('create with a bad kind → the service 422 as exit 2', async () => {
    const r = await svc(['items', 'create', '--kind', 'saga', '--title', 'x']);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });

  test('edit with nothing to change → exit 2', async () => {
    expect((await svc(['items', 'edit', 'DEMO-6'])).code).toBe(2);
  });
});

describe('items edit and If-Match', () => {
  let proxy: FaultProxy;
  beforeAll(async () => {
    proxy = await startFaultProxy({ target: server.url });
  });
  afterAll(async () => {
    await proxy.close();
  });

  test('sends If-Match with the ETag of its own read, and the change lands', async () => {
    proxy.setPlan([]);
    proxy.clearSeen();
    const r = await svc(['items', 'edit', 'DEMO-6', '--priority', 'highest', '--title', 'Upgrade the HTTP client now'], { SVC_BASE_URL: proxy.url });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe('Updated DEMO-6\n');
    const [read] = proxy.requests('GET', /\/work-items\/DEMO-6$/);
    const [write] = proxy.requests('PATCH', /\/work-items\/DEMO-6$/);
    expect(read!.responseHeaders.etag).toBeTruthy();
    expect(write!.headers['if-match']).toBe(read!.responseHeaders.etag);
    expect(JSON.parse(write!.body)).toEqual({ priority: 'highest', title: 'Upgrade the HTTP client now' });
    expect(await item('DEMO-6')).toMatchObject({ priority: 'highest', title: 'Upgrade the HTTP client now' });
  });

  test('someone else changes the item between its read and its write: one line, exit 1, their change kept', async () => {
    // The proxy holds the PATCH back; meanwhile another client edits the item directly.
    proxy.setPlan([{ method: 'PATCH', path: /\/work-items\/DEMO-10$/, fault: { kind: 'latency', ms: 1500 } }]);
    proxy.clearSeen();
    const editing = svc(['items', 'edit', 'DEMO-10', '--title', 'Mine'], { SVC_BASE_URL: proxy.url });
    for (let i = 0; i < 200 && proxy.requests('PATCH').length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(proxy.requests('PATCH')).toHaveLength(1);
    const theirs = await svc(['api', 'PATCH', '/work-items/DEMO-10', '-f', 'title=Theirs']);
    expect(theirs.code, theirs.stderr).toBe(0);

    const r = await editing;
    expect(proxy.requests('PATCH')[0]!.status).toBe(412);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe('svc: DEMO-10 changed while it was being edited; run the command again to edit the new version\n');
    expect(await item('DEMO-10')).toMatchObject({ title: 'Theirs' });
  });
});

describe('ready lanes', () => {
  test('ready bugs: the group container, then each item', async () => {
    expect(rows((await svc(['ready', 'bugs'])).stdout)).toEqual([['DEMO-7', 'DEMO-8', 'subtask', 'medium', 'Fix rounding in totals']]);
  });

  test.each([
    [['--priority', 'medium'], ['DEMO-8']],
    [['--priority', 'low'], []],
    [['--ancestor', 'DEMO-7'], ['DEMO-8']],
    [['--ancestor', 'DEMO-1'], []],
    [['--kind', 'subtask'], ['DEMO-8']],
    [['--kind', 'bug'], []],
  ])('ready bugs %j', async (flags, keys) => {
    const r = await svc(['ready', 'bugs', ...flags]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout ? rows(r.stdout).map((c) => c[1]) : []).toEqual(keys);
  });

  test.each([
    [[], ['DEMO-2']],
    [['--priority', 'high'], ['DEMO-2']],
    [['--priority', 'low'], []],
    [['--assignee', 'none'], ['DEMO-2']],
  ])('ready containers %j', async (flags, keys) => {
    const r = await svc(['ready', 'containers', ...flags]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout ? rows(r.stdout).map((c) => c[0]) : []).toEqual(keys);
    // READY and CHILDREN counts: DEMO-4 waits on DEMO-3, so one leaf fewer is ready than there are children.
    if (keys.length)
      expect(rows(r.stdout)[0]).toEqual(['DEMO-2', 'story', 'high', expect.stringMatching(/^\d+$/), expect.stringMatching(/^\d+$/), 'Guest checkout']);
    if (keys.length) expect(Number(rows(r.stdout)[0]![3])).toBe(Number(rows(r.stdout)[0]![4]) - 1);
  });
});

describe('runs show', () => {
  test('the run, then a row per card', async () => {
    const repo = await makeRepo();
    const agent = 'sh -c "git -c user.name=a -c user.email=a@example.invalid commit -q --allow-empty -m \\"$SVC_CARD_KEY: done\\""';
    const done = await svc(['run', 'DEMO-5', '--agent-cmd', agent, '--repo', repo, '--json']);
    expect(done.code, done.stderr).toBe(0);
    const { runId } = JSON.parse(done.stdout) as { runId: string };
    const r = await svc(['runs', 'show', runId]);
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toBe(`run ${runId} · run · succeeded (completed)`);
    expect(lines[1]).toMatch(/^started \S+Z · ended \S+Z · seq \d+ · agent custom$/);
    expect(lines[2]).toBe('DEMO-5\timplemented\t0\tsvc/DEMO-5\t');
    expect((await svc(['runs', 'show', 'run_nope'])).code).toBe(4);
  });
});

describe('runs watch', () => {
  test('follows a live run: a stamped line when it changes, until it closes; then exit 0', async () => {
    const repo = await makeRepo();
    const agent = `${process.execPath} ${resolve(import.meta.dirname, '../fixtures/agents/slow-commit.mjs')}`;
    // svc run in the background; its first progress line names the run.
    const running = startSvc(['run', 'DEMO-3', '--agent-cmd', agent, '--repo', repo], { env });
    const ran = running.done.then((r) => r.code);
    let ended = false;
    void ran.then(() => (ended = true));
    let runId = '';
    for (;;) {
      runId = running.stderr.text.match(/run (run_\w+) opened/)?.[1] ?? '';
      if (runId) break;
      if (ended) throw new Error(`svc run ended before opening a run: ${running.stderr.text}`);
      await new Promise((r) => setTimeout(r, 20));
    }

    const r = await svc(['runs', 'watch', runId, '--interval', '200ms']);
    expect(await ran).toBe(0);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines[0]).toMatch(new RegExp(`^\\d{4}-\\d\\d-\\d\\dT\\S+Z run ${runId} · run · running$`));
    expect(lines.at(-2)).toMatch(new RegExp(`^\\S+Z run ${runId} · run · succeeded \\(completed\\)$`));
    expect(lines.at(-1)).toBe('  DEMO-3 implemented exit 0');
  });
});

describe('svc api', () => {
  test('GET /me', async () => {
    const r = await svc(['api', 'GET', '/me']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      user: { id: me.user.id, name: 'Ada Demo', email: 'ada@acme.test' },
      workspaceId: me.workspaceId,
      permissions: ['project:browse', 'work_item:edit', 'sprint:manage', 'ai:plan'],
    });
  });

  test('--paginate follows nextCursor into one array (also with the /api/v1 prefix and a query in the path)', async () => {
    const one = JSON.parse((await svc(['api', 'GET', '/projects/DEMO/work-items', '-f', 'limit=3'])).stdout) as { items: unknown[]; nextCursor: string | null };
    expect(one.items).toHaveLength(3);
    expect(one.nextCursor).toBeTruthy();
    const all = JSON.parse((await svc(['api', 'GET', '/api/v1/projects/DEMO/work-items?limit=3', '--paginate'])).stdout) as { key: string }[];
    const listed = rows((await svc(['items', 'list'])).stdout).map((c) => c[0]);
    expect(all.map((i) => i.key)).toEqual(listed);
  });

  test('--paginate with a filter field', async () => {
    const bugs = JSON.parse((await svc(['api', 'GET', '/projects/DEMO/work-items', '--paginate', '-f', 'filter=kind:subtask', '-f', 'limit=2'])).stdout) as {
      key: string;
    }[];
    expect(bugs.map((i) => i.key)).toEqual(expect.arrayContaining(['DEMO-3', 'DEMO-4', 'DEMO-5', 'DEMO-8']));
  });

  test('PATCH /work-items/DEMO-9 -f priority=high', async () => {
    const r = await svc(['api', 'PATCH', '/work-items/DEMO-9', '-f', 'priority=high']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ key: 'DEMO-9', priority: 'high' });
    expect(await item('DEMO-9')).toMatchObject({ priority: 'high' });
  });

  test('--verbose: a line per request (each page too) with its status, time and request id', async () => {
    const r = await svc(['api', 'GET', '/projects/DEMO/work-items', '--paginate', '-f', 'limit=4', '--verbose']);
    expect(r.code).toBe(0);
    const lines = r.stderr.trim().split('\n');
    expect(lines.length).toBeGreaterThanOrEqual(3);
    for (const l of lines) expect(l).toMatch(/^GET \/api\/v1\/projects\/DEMO\/work-items\?limit=4\S* → 200 in \d+ ms \(request [\w.-]+\)$/);
  });

  test('--input - sends the body from stdin', async () => {
    const r = await svc(['api', 'PATCH', '/work-items/DEMO-9', '--input', '-'], {}, JSON.stringify({ priority: 'low' }));
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ priority: 'low' });
  });

  test.each([
    [['api', 'GET', '/no/such/thing'], 2, /not an operation of the contract/],
    [['api', 'PATCH', '/work-items/DEMO-9', '-f', 'priority=urgent'], 2, /priority/],
    [['api', 'GET', '/work-items/DEMO-999'], 4, /DEMO-999/],
  ])('%j → exit %i, one line', async (args, code, message) => {
    const r = await svc(args);
    expect(r.code).toBe(code);
    expect(r.stderr).toMatch(message);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });
});
