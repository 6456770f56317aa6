// Hosted runs against a contract-faithful service: a run credential of any shape
// (the contract's `svc_pat_` included), target repositories named by `owner/name`, https, ssh or
// scp-like URLs, and a checkout already in the container used instead of a second clone. The runner
// is the command line run in-process (test/support/svc-in-process.ts) against the local service and
// its smart-HTTP git remote; the credential helper git starts is the real built bin/svc.js. The
// end to end run of real processes is test/commands/hosted/attach-cli.test.ts.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ClientConfigError, exitCodeFor } from '../../../src/api/index.js';
import { validateClientOptions } from '../../../src/api/request.js';
import { parseRepositoryRef, sameRepository } from '../../../src/contract/repository-ref.js';
import { PAT_PREFIX, type DispatchRun } from '../../../src/contract/types.js';
import { GitCredentialBroker, NoGitCredentialError } from '../../../src/dispatch/hosted/broker.js';
import { cloneDirOf } from '../../../src/dispatch/hosted/git.js';
import { mintRunCredential } from '../../../src/server/dispatch-runs/index.js';
import { createRepository, repositoryPath } from '../../../src/server/git/index.js';
import { isolatedEnv } from '../../support/cli.js';
import { svcInProcess } from '../../support/svc-in-process.js';
import { startTestService, type TestService } from '../../support/service.js';

const exec = promisify(execFile);
const COMMIT =
  'sh -c "echo work > card-$SVC_CARD_KEY.txt && git add -A && git -c user.name=a -c user.email=a@example.invalid commit -qm \\"$SVC_CARD_KEY: done\\""';

describe('target repository shapes', () => {
  test.each([
    ['acme/shop', null, 'acme/shop'],
    ['https://git.example.test/acme/shop.git', 'git.example.test', 'acme/shop'],
    ['https://git.example.test/acme/shop/', 'git.example.test', 'acme/shop'],
    ['http://127.0.0.1:8787/git/acme/shop.git', '127.0.0.1', 'git/acme/shop'],
    ['ssh://git@git.example.test:2222/acme/shop.git', 'git.example.test', 'acme/shop'],
    ['git@git.example.test:acme/shop.git', 'git.example.test', 'acme/shop'],
    ['Git.Example.Test:group/sub/shop', 'git.example.test', 'group/sub/shop'],
  ])('%s → host %s, path %s, cloned into <workspace>/<path>', (text, host, path) => {
    expect(parseRepositoryRef(text)).toEqual({ host, path });
    expect(cloneDirOf('/ws', text)).toBe(join('/ws', ...path.split('/')));
  });

  test.each(['', '  ', 'shop', 'acme/../etc', 'https://git.example.test/shop', 'ftp://git.example.test/acme/shop', 'acme//shop', '../acme/shop'])(
    'refused: %j',
    (text) => {
      expect(parseRepositoryRef(text)).toBeNull();
      expect(() => cloneDirOf('/ws', text)).toThrow(/neither owner\/name nor a git URL/);
    },
  );

  test('the same repository named in different shapes; other hosts and other repositories are not', () => {
    expect(sameRepository('acme/shop', 'git@git.example.test:acme/shop.git')).toBe(true);
    expect(sameRepository('https://git.example.test/Acme/Shop', 'ssh://git@git.example.test/acme/shop.git')).toBe(true);
    expect(sameRepository('acme/shop', 'http://127.0.0.1:8787/git/acme/shop.git')).toBe(true);
    expect(sameRepository('https://a.example/acme/shop', 'https://b.example/acme/shop')).toBe(false);
    expect(sameRepository('acme/shop', 'acme/shopping')).toBe(false);
    expect(sameRepository('acme/shop', 'other/shop')).toBe(false);
  });
});

describe('the broker matches a credential however the service shapes its repository', () => {
  test('a URL-shaped `repository` in getGitCredential answers for owner/name and for an scp-like name; another repository gets none', async () => {
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
    const broker = new GitCredentialBroker({
      runId: 'run_x',
      api: {
        getGitCredential: async () => ({
          credentials: [
            {
              repository: 'https://git.example.test/acme/shop',
              url: 'https://git.example.test/acme/shop.git',
              username: 'x-access-token',
              token: 'ghs_abcdefghijklmnopqrstuvwxyz0123456789',
              expiresAt,
            },
          ],
          dispatchedBy: null,
        }),
      },
    });
    expect((await broker.credentialFor('acme/shop')).url).toBe('https://git.example.test/acme/shop.git');
    expect((await broker.credentialFor('git@git.example.test:acme/shop.git')).url).toBe('https://git.example.test/acme/shop.git');
    await expect(broker.credentialFor('acme/other')).rejects.toBeInstanceOf(NoGitCredentialError);
    expect(broker.tradeCount).toBe(2);
  });
});

describe('the run credential', () => {
  test.each(['svc_run_abcdefghijklmnop', `${PAT_PREFIX}abcdefghijklmnop`, 'opaque.Token-123_x'])('any non-empty credential is taken: %s', (token) => {
    expect(() => validateClientOptions({ baseUrl: 'http://127.0.0.1:1', token, credentialKind: 'run' })).not.toThrow();
  });

  test.each([
    ['', /no run credential/],
    ['   ', /no run credential .*blank/],
    ['a b', /whitespace/],
    ['tok\n', /whitespace/],
  ])('refused: %j (exit 3)', (token, message) => {
    let error: unknown;
    try {
      validateClientOptions({ baseUrl: 'http://127.0.0.1:1', token, credentialKind: 'run' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ClientConfigError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).not.toContain(token.trim() || '\u0000');
    expect(exitCodeFor(error)).toBe(3);
  });

  test.each([
    ['attach', ''],
    ['attach', '   '],
    ['run', ''],
  ])('svc %s with SVC_RUN_TOKEN=%j: one line, exit 3, nothing run locally', async (cmd, token) => {
    const r = await svcInProcess([cmd, ...(cmd === 'run' ? ['PROJ-1', '--agent-cmd', 'true'] : [])], {
      env: isolatedEnv({ SVC_BASE_URL: 'http://127.0.0.1:9', SVC_RUN_ID: 'run_x', SVC_RUN_TOKEN: token, SVC_TOKEN: 'svc_pat_abcdefghijklmnop' }),
    });
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toMatch(/^svc: no run credential \(SVC_RUN_TOKEN\) given/);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });
});

describe('a hosted run with a svc_pat_ run credential and URL-shaped target repositories', () => {
  let svc: TestService;
  let gitRoot: string;
  beforeAll(async () => {
    const root = mkdtempSync(join(tmpdir(), 'svc-shapes-'));
    gitRoot = join(root, 'git-root');
    svc = await startTestService({ config: { gitRoot } });
    await createRepository(gitRoot, 'acme/shop', { seedCommit: true });
  });
  afterAll(async () => {
    await svc.close();
  });

  /** Opens a hosted run over new cards naming `targets` and mints its credential in the contract's shape. */
  async function hostedRun(targets: Array<Record<string, unknown>>) {
    const keys = targets.map((t, i) => svc.admin.createWorkItem({ projectKey: svc.projectKey, kind: 'task', type: 'code', title: `card ${i}`, ...t }).key);
    const opened = await svc.call('POST', '/dispatch-runs', {
      body: { projectKey: svc.projectKey, command: 'run', origin: 'hosted', cards: keys.map((workItemKey) => ({ workItemKey })) },
    });
    expect(opened.status).toBe(201);
    const runId = opened.body.run.id as string;
    const runToken = mintRunCredential(svc.db, runId, new Date(), PAT_PREFIX);
    expect(runToken.startsWith(PAT_PREFIX)).toBe(true);
    const env = isolatedEnv({ SVC_BASE_URL: svc.url, SVC_RUN_ID: runId, SVC_RUN_TOKEN: runToken });
    return { keys, runId, runToken, env };
  }

  const bareRef = async (ref: string) =>
    (await exec('git', ['rev-parse', '--verify', '--quiet', ref], { cwd: repositoryPath(gitRoot, 'acme/shop') }).catch(() => ({ stdout: '' }))).stdout.trim();

  test('clones once (https and scp-like names of one repository), the agent commits, both branches are pushed', async () => {
    const { keys, runId, runToken, env } = await hostedRun([
      { targetRepo: 'https://git.example.test/acme/shop.git' },
      { targetRepositories: ['git@git.example.test:acme/shop.git'] },
    ]);
    const workspace = mkdtempSync(join(tmpdir(), 'svc-ws-'));
    const r = await svcInProcess(['attach', '--agent-cmd', COMMIT, '--json'], { env, cwd: workspace });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout + r.stderr).not.toContain(runToken);
    expect(existsSync(join(workspace, 'acme', 'shop', '.git'))).toBe(true);
    for (const key of keys) expect(await bareRef(`refs/heads/svc/${key}`)).toMatch(/^[0-9a-f]{40}$/);
    const run = (await svc.call('GET', `/dispatch-runs/${runId}`)).body as DispatchRun;
    expect(run).toMatchObject({ status: 'succeeded' });
    expect(run.cards.map((c) => c.disposition)).toEqual(['implemented', 'implemented']);
  });

  test('a checkout already in the container (origin: an scp-like URL of the repository) is used instead of a clone, by cwd or by --repo', async () => {
    for (const how of ['cwd', '--repo'] as const) {
      const { keys, runId, env } = await hostedRun([{ targetRepo: 'ssh://git@git.example.test/acme/shop.git' }]);
      const checkout = mkdtempSync(join(tmpdir(), 'svc-checkout-'));
      await exec('git', ['clone', '-q', repositoryPath(gitRoot, 'acme/shop'), checkout]);
      await exec('git', ['remote', 'set-url', 'origin', 'git@git.example.test:acme/shop.git'], { cwd: checkout });
      const elsewhere = mkdtempSync(join(tmpdir(), 'svc-elsewhere-'));
      const r = await svcInProcess(['attach', '--agent-cmd', COMMIT, ...(how === '--repo' ? ['--repo', checkout] : [])], {
        env,
        cwd: how === 'cwd' ? checkout : elsewhere,
      });
      expect(r.code, r.stderr).toBe(0);
      // No second copy: neither inside the checkout nor where svc was started (nor in this
      // process's own folder, where an in-process svc that ignored its cwd would have cloned).
      expect(existsSync(join(checkout, 'acme'))).toBe(false);
      expect(existsSync(join(elsewhere, 'acme'))).toBe(false);
      expect(existsSync(join(process.cwd(), 'acme'))).toBe(false);
      // The agent worked in a worktree of the checkout; the branch went to the service's remote.
      const { stdout: branches } = await exec('git', ['branch', '--list', `svc/${keys[0]}`], { cwd: checkout });
      expect(branches.trim()).toContain(`svc/${keys[0]}`);
      expect(await bareRef(`refs/heads/svc/${keys[0]}`)).toMatch(/^[0-9a-f]{40}$/);
      expect((await svc.call('GET', `/dispatch-runs/${runId}`)).body).toMatchObject({ status: 'succeeded' });
    }
  });
});

describe('svc server run-token --contract-prefix', () => {
  test("mints a svc_pat_ run credential that reads its run and nothing a person's token could", async () => {
    const { startLocalServer } = await import('../../support/server-process.js');
    const server = await startLocalServer();
    try {
      const call = async (method: string, path: string, token: string, body?: unknown) => {
        const res = await fetch(`${server.url}/api/v1${path}`, {
          method,
          headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
          ...(body ? { body: JSON.stringify(body) } : {}),
        });
        return { status: res.status, body: (await res.json().catch(() => null)) as any };
      };
      const opened = await call('POST', '/dispatch-runs', server.token, {
        projectKey: 'DEMO',
        command: 'run',
        origin: 'hosted',
        cards: [{ workItemKey: 'DEMO-6' }],
      });
      expect(opened.status).toBe(201);
      const runId = opened.body.run.id as string;
      const r = await svcInProcess(['server', 'run-token', runId, '--db', server.db, '--contract-prefix'], { env: isolatedEnv() });
      expect(r.code, r.stderr).toBe(0);
      const token = r.stdout.trim();
      expect(token).toMatch(/^svc_pat_[A-Za-z0-9]{32}$/);
      expect((await call('GET', `/dispatch-runs/${runId}`, token)).status).toBe(200);
      expect((await call('GET', '/me', token)).status).toBe(403);
      // An unknown token of the same shape is still the one undifferentiated 401.
      expect((await call('GET', `/dispatch-runs/${runId}`, `svc_pat_${'x'.repeat(32)}`)).status).toBe(401);
    } finally {
      expect(await server.stop()).toEqual([]);
    }
  });
});
