// Offline use without the demo seed (docs/service.md): `svc server init` makes a workspace, a project
// and a token on an empty database; `svc server delivery` records a pull request that `review`
// and `fix` then select. Everything through the real command line against the real service.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { isolatedEnv, makeRepo, type CliEnv } from '../../support/cli.js';
import { startSvc, svcInProcess, type InProcessRun } from '../../support/svc-in-process.js';

const db = join(mkdtempSync(join(tmpdir(), 'svc-init-')), 'svc.db');
let server: InProcessRun;
let url: string;
let firstToken: string;

const as = (token: string): CliEnv => isolatedEnv({ SVC_BASE_URL: url, SVC_TOKEN: token });
const json = <T>(text: string): T => JSON.parse(text) as T;

beforeAll(async () => {
  const init = await svcInProcess(['server', 'init', '--db', db, '--workspace', 'mine', '--project', 'SHOP', '--name', 'My shop', '--repo', 'me/shop']);
  expect(init).toMatchObject({ code: 0, stderr: `made workspace mine and project SHOP in ${db}\n` });
  firstToken = init.stdout.trim();
  server = startSvc(['server', '--port', '0', '--db', db]);
  await vi.waitFor(() => expect(server.stdout.text).toMatch(/^http:\S+\n/), { timeout: 15_000, interval: 10 });
  url = server.stdout.text.split('\n')[0]!;
});
afterAll(async () => {
  server.context()?.abort.abort('SIGTERM');
  expect((await server.done).code).toBe(143);
});

describe('svc server init', () => {
  it('prints only a token, which reads the new project', async () => {
    expect(firstToken).toMatch(/^svc_pat_[A-Za-z0-9]{32}$/);
    const show = await svcInProcess(['projects', 'show', 'SHOP', '--json'], { env: as(firstToken) });
    expect(show.code).toBe(0);
    expect(json<{ key: string; name: string }>(show.stdout)).toMatchObject({ key: 'SHOP', name: 'My shop' });
  });

  it('run again: finds the same workspace and project, changes nothing, prints a fresh token; the first still works', async () => {
    const again = await svcInProcess(['server', 'init', '--db', db, '--workspace', 'mine', '--project', 'SHOP', '--name', 'Another name']);
    expect(again.code).toBe(0);
    expect(again.stderr).toBe(`found workspace mine and project SHOP in ${db}: a fresh token\n`);
    const token = again.stdout.trim();
    expect(token).toMatch(/^svc_pat_/);
    expect(token).not.toBe(firstToken);
    for (const t of [token, firstToken]) {
      const ws = await svcInProcess(['workspaces', '--json'], { env: as(t) });
      expect(json<{ slug: string }[]>(ws.stdout).map((w) => w.slug)).toEqual(['mine']);
    }
    const show = await svcInProcess(['projects', 'show', 'SHOP', '--json'], { env: as(token) });
    expect(json<{ name: string }>(show.stdout).name).toBe('My shop');
  });

  it.each([
    [['--workspace', 'Mine', '--project', 'SHOP'], 2, /^svc: --workspace takes a slug/],
    [['--workspace', 'mine', '--project', 'shop'], 2, /^svc: --project takes a key/],
    [['--workspace', 'mine'], 2, /^svc: required option '--project <key>' not specified/],
    [['--workspace', 'mine', '--project', 'SHOP', '--no-db'], 2, /^svc: required option '--db <file>' not specified \(see --help\)\n$/],
  ])('%j: one line, exit %i, no token', async (args, code, message) => {
    const r = await svcInProcess(['server', 'init', ...(args.includes('--no-db') ? [] : ['--db', db]), ...args.filter((a) => a !== '--no-db')]);
    expect(r.code).toBe(code);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(message);
  });
});

describe('a project with nothing ready', () => {
  it.each([
    ['next', 'nothing is ready'],
    ['batch', 'no ready leaves'],
    ['auto', 'no ready leaves'],
  ])('%s says "%s" once, opens no run, exit 0', async (command, note) => {
    const init = await svcInProcess(['server', 'init', '--db', db, '--workspace', 'mine', '--project', 'EMPTY']);
    const r = await svcInProcess([command, '--project', 'EMPTY', '--agent-cmd', 'true'], { env: as(init.stdout.trim()), cwd: await makeRepo() });
    expect(r).toMatchObject({ code: 0, stdout: '', stderr: `${note}\n` });
  });
});

describe('svc server delivery', () => {
  it('an item of the project takes its --repo; a recorded open pull request makes review and fix select it', async () => {
    const created = await svcInProcess(
      ['items', 'create', '--project', 'SHOP', '--kind', 'task', '--title', 'Add a health check', '--type', 'code', '--json'],
      { env: as(firstToken) },
    );
    expect(created.code).toBe(0);
    const key = json<{ key: string; targetRepos: string[] }>(created.stdout);
    expect(key.targetRepos).toEqual(['me/shop']);
    const repo = await makeRepo();
    const dry = (command: string) => svcInProcess([command, key.key, '--dry-run', '--agent-cmd', 'true', '--json'], { env: as(firstToken), cwd: repo });
    const skipOf = async (command: string) => json<{ cards: { skipReason: string | null }[] }>((await dry(command)).stdout).cards[0]!.skipReason;
    expect(await skipOf('review')).toBe('no open delivery');
    // No card of the named set can run: one line saying why, exit 1, no run (docs/dispatch.md).
    const none = await svcInProcess(['review', key.key, '--agent-cmd', 'true'], { env: as(firstToken), cwd: repo });
    expect(none).toMatchObject({ code: 1, stdout: '', stderr: `svc: no card ran: ${key.key} no open delivery\n` });

    const rec = await svcInProcess(['server', 'delivery', key.key, '--db', db, '--number', '12']);
    expect(rec).toMatchObject({ code: 0, stdout: `${key.key} me/shop#12 open https://github.com/me/shop/pull/12\n` });
    expect(await skipOf('review')).toBeNull();
    expect(await skipOf('fix')).toBe('no open delivery with ci: failing');

    // The same pull request again replaces its record: one delivery, now failing.
    expect((await svcInProcess(['server', 'delivery', key.key, '--db', db, '--number', '12', '--ci', 'failing'])).code).toBe(0);
    expect(await skipOf('fix')).toBeNull();
    const item = await svcInProcess(['items', 'show', key.key, '--json'], { env: as(firstToken) });
    expect(json<{ deliveries: unknown[] }>(item.stdout).deliveries).toEqual([
      {
        repo: 'me/shop',
        number: 12,
        title: 'Add a health check',
        url: 'https://github.com/me/shop/pull/12',
        state: 'open',
        ci: 'failing',
        baseRef: null,
        defaultBranch: 'main',
      },
    ]);

    expect((await svcInProcess(['server', 'delivery', key.key, '--db', db, '--number', '12', '--state', 'merged'])).code).toBe(0);
    expect(await skipOf('review')).toBe('no open delivery');
  });

  it.each([
    [['SHOP-999', '--number', '1'], 4, /^svc: no work item SHOP-999 in this database$/],
    [['shop-1', '--number', '1'], 2, /^svc: not a work item key: shop-1$/],
    [['SHOP-1', '--number', '0'], 2, /--number takes a pull request number/],
    [['SHOP-1', '--number', '1', '--ci', 'green'], 2, /Allowed choices are passing, failing, running/],
    [['SHOP-1', '--number', '1', '--url', 'not a url'], 2, /^svc: --url takes an http\(s\) address/],
  ])('%j: one line, exit %i', async (args, code, message) => {
    const r = await svcInProcess(['server', 'delivery', ...args, '--db', db]);
    expect(r.code).toBe(code);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr.trim()).toMatch(message);
  });
});
