// The local service's smart-HTTP git remote: who gets in (only getGitCredential's tokens, for their own
// repositories), what the refusals look like (401 + Basic challenge, 404), and that git itself,
// given our fail-closed helper, fails fast instead of prompting for a repository of no card.
import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { createApiClient } from '../../../src/api/index.js';
import { prepareHostedExecution, type HostedExecution } from '../../../src/dispatch/hosted/index.js';
import { createRepository, parseCgiHead, parseRepositoryName, repositoryPath } from '../../../src/server/git/index.js';
import { bareRef, git, hostedFixture, type HostedFixture } from '../../support/hosted.js';

let fixture: HostedFixture | undefined;
let hosted: HostedExecution | undefined;
afterEach(async () => {
  await hosted?.dispose();
  await fixture?.svc.close();
  hosted = undefined;
  fixture = undefined;
});

const basic = (password: string) => ({ authorization: `Basic ${Buffer.from(`x-access-token:${password}`).toString('base64')}` });

async function tokenOf(f: HostedFixture): Promise<string> {
  const api = createApiClient({ baseUrl: f.svc.url, token: f.runToken, credentialKind: 'run' });
  try {
    return (await api.getGitCredential(f.runId)).credentials[0]!.token;
  } finally {
    await api.close();
  }
}

describe('the git remote of the local service', () => {
  it('lets in an installation token for its own repository only', async () => {
    const f = (fixture = await hostedFixture());
    await createRepository(f.gitRoot, 'acme/secret', { seedCommit: true });
    const token = await tokenOf(f);
    const refs = (repo: string, headers: Record<string, string> = {}) => fetch(`${f.svc.url}/git/${repo}.git/info/refs?service=git-upload-pack`, { headers });

    const ok = await refs('acme/widgets', basic(token));
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toBe('application/x-git-upload-pack-advertisement');
    expect(await ok.text()).toContain('refs/heads/main');

    for (const [what, headers] of [
      ['no credentials', {}],
      ['a PAT', basic(f.svc.token)],
      ['the run credential', basic(f.runToken)],
      ['a bearer token', { authorization: `Bearer ${token}` }],
      ['a made-up token', basic('ghs_000000000000000000000000000000000000')],
    ] as const) {
      const res = await refs('acme/widgets', headers);
      expect(res.status, what).toBe(401);
      expect(res.headers.get('www-authenticate'), what).toMatch(/^Basic realm=/);
    }
    // A token of this run for a repository of no card of it: refused like any other.
    expect((await refs('acme/secret', basic(token))).status).toBe(401);
  });

  it('answers 404 for what is not a smart-HTTP repository address, and for a missing repository', async () => {
    const f = (fixture = await hostedFixture({
      items: [
        { title: 'Ghost', targetRepo: 'acme/widgets' },
        { title: 'Missing', targetRepo: 'acme/missing' },
      ],
    }));
    // acme/missing is named by a card (so the token covers it) but absent from the git root.
    rmSync(repositoryPath(f.gitRoot, 'acme/missing'), { recursive: true, force: true });
    const token = await tokenOf(f);
    const get = (path: string) => fetch(`${f.svc.url}${path}`, { headers: basic(token) });
    expect((await get('/git/acme/missing.git/info/refs?service=git-upload-pack')).status).toBe(404);
    expect((await get('/git/acme/widgets.git/HEAD')).status).toBe(404);
    expect((await get('/git/acme/../etc.git/info/refs')).status).toBe(404);
    expect((await get('/git/widgets.git/info/refs')).status).toBe(404);
    expect((await fetch(`${f.svc.url}/git/acme/widgets.git/git-upload-pack`, { headers: basic(token) })).status).toBe(404);
  });

  it('makes git fail fast, without a prompt, for a repository the run has no credential for', async () => {
    const f = (fixture = await hostedFixture());
    await createRepository(f.gitRoot, 'acme/secret', { seedCommit: true });
    const h = (hosted = await prepareHostedExecution(f.env, { helperArgv: f.helperArgv, workspaceDir: f.workspaceDir }));
    const target = join(mkdtempSync(join(tmpdir(), 'svc-clone-')), 'secret');
    const started = Date.now();
    const failure = await promisify(execFile)(
      'git',
      [
        '-c',
        'credential.helper=',
        '-c',
        `credential.helper=!${f.helperArgv.join(' ')}`,
        '-c',
        'credential.useHttpPath=true',
        'clone',
        `${f.svc.url}/git/acme/secret.git`,
        target,
      ],
      { env: h.gitEnv, timeout: 20_000 },
    ).then(
      () => null,
      (e: { stderr?: string }) => e,
    );
    expect(failure).not.toBeNull();
    expect(failure!.stderr).toMatch(/terminal prompts disabled|could not read Username|Authentication failed/);
    expect(Date.now() - started).toBeLessThan(15_000);
  });
});

/** Plain git with the installation token as a Basic header: no helper, nothing of svc's. */
async function gitWithToken(cwd: string, token: string, ...args: string[]): Promise<{ ok: boolean; stderr: string }> {
  const header = `http.extraHeader=Authorization: ${basic(token).authorization}`;
  return promisify(execFile)('git', ['-c', 'credential.helper=', '-c', header, ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOME: cwd, GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0', LANG: 'C' },
    timeout: 20_000,
  }).then(
    (r) => ({ ok: true, stderr: r.stderr }),
    (e: { stderr?: string }) => ({ ok: false, stderr: e.stderr ?? '' }),
  );
}

describe('the refs a run may push', () => {
  it("refuses the default branch, tags and another run's card; takes its own svc/KEY and its attempt branches", async () => {
    const f = (fixture = await hostedFixture({
      items: [
        { title: 'Mine', targetRepo: 'acme/widgets' },
        { title: 'Also mine', targetRepo: 'acme/widgets' },
      ],
    }));
    const [mine, alsoMine] = f.keys as [string, string];
    const other = f.svc.admin.createWorkItem({ projectKey: f.svc.projectKey, kind: 'task', type: 'code', title: 'Theirs', targetRepo: 'acme/widgets' }).key;
    const opened = await f.svc.call('POST', '/dispatch-runs', {
      body: { projectKey: f.svc.projectKey, command: 'run', origin: 'hosted', cards: [{ workItemKey: other }] },
    });
    expect(opened.status).toBe(201);
    const token = await tokenOf(f);
    const mainBefore = await bareRef(f, 'acme/widgets', 'refs/heads/main');

    const work = join(mkdtempSync(join(tmpdir(), 'svc-push-')), 'widgets');
    expect((await gitWithToken(tmpdir(), token, 'clone', '--quiet', `${f.svc.url}/git/acme/widgets.git`, work)).ok).toBe(true);
    await git(work, 'commit', '--allow-empty', '--quiet', '-m', 'agent work');
    const head = await git(work, 'rev-parse', 'HEAD');
    const push = (...refspecs: string[]) => gitWithToken(work, token, 'push', 'origin', ...refspecs);

    for (const [refspec, ref] of [
      ['HEAD:main', 'refs/heads/main'],
      ['HEAD:refs/heads/release', 'refs/heads/release'],
      ['HEAD:refs/tags/v1', 'refs/tags/v1'],
      [`HEAD:svc/${other}`, `refs/heads/svc/${other}`],
      [`HEAD:svc/${mine}-attempt-x`, `refs/heads/svc/${mine}-attempt-x`],
      [`HEAD:svc/${mine}-attempt-`, `refs/heads/svc/${mine}-attempt-`],
      [`HEAD:svc/${mine}/nested`, `refs/heads/svc/${mine}/nested`],
    ] as const) {
      const r = await push(refspec);
      expect(r.ok, refspec).toBe(false);
      expect(r.stderr, refspec).toContain('(hook declined)');
      expect(r.stderr, refspec).toContain(`remote: protected ref ${ref}:`);
      if (ref !== 'refs/heads/main') expect(await bareRef(f, 'acme/widgets', ref), refspec).toBeNull();
    }
    expect(await bareRef(f, 'acme/widgets', 'refs/heads/main')).toBe(mainBefore);

    // Per ref: in one push, its own branch lands and main is still refused.
    const mixed = await push(`HEAD:svc/${mine}`, 'HEAD:main');
    expect(mixed.ok).toBe(false);
    expect(mixed.stderr).toMatch(/! \[remote rejected\] HEAD -> main \(hook declined\)/);
    expect(await bareRef(f, 'acme/widgets', `refs/heads/svc/${mine}`)).toBe(head);
    expect(await bareRef(f, 'acme/widgets', 'refs/heads/main')).toBe(mainBefore);

    for (const branch of [`svc/${alsoMine}`, `svc/${mine}-attempt-2`]) {
      const r = await push(`HEAD:${branch}`);
      expect(r, branch).toMatchObject({ ok: true });
      expect(await bareRef(f, 'acme/widgets', `refs/heads/${branch}`), branch).toBe(head);
    }
  });
});

describe('the protection itself', () => {
  it("cannot be replaced by the repository's own hooks or config", async () => {
    const f = (fixture = await hostedFixture());
    const bare = repositoryPath(f.gitRoot, 'acme/widgets');
    // A repository that would let everything in: its own update hook, and a hooks path of its own.
    const lax = mkdtempSync(join(tmpdir(), 'svc-lax-hooks-'));
    for (const dir of [join(bare, 'hooks'), lax]) {
      writeFileSync(join(dir, 'update'), '#!/bin/sh\nexit 0\n');
      chmodSync(join(dir, 'update'), 0o755);
    }
    await git(bare, 'config', 'core.hooksPath', lax);
    const token = await tokenOf(f);
    const mainBefore = await bareRef(f, 'acme/widgets', 'refs/heads/main');
    const work = join(mkdtempSync(join(tmpdir(), 'svc-push-')), 'widgets');
    expect((await gitWithToken(tmpdir(), token, 'clone', '--quiet', `${f.svc.url}/git/acme/widgets.git`, work)).ok).toBe(true);
    await git(work, 'commit', '--allow-empty', '--quiet', '-m', 'agent work');
    const r = await gitWithToken(work, token, 'push', 'origin', 'HEAD:main');
    expect(r.ok).toBe(false);
    expect(r.stderr).toContain('remote: protected ref refs/heads/main:');
    expect(await bareRef(f, 'acme/widgets', 'refs/heads/main')).toBe(mainBefore);
  });

  it('refuses every ref when it is given no keys', async () => {
    const f = (fixture = await hostedFixture());
    // The remote writes its hook on first use.
    const token = await tokenOf(f);
    await fetch(`${f.svc.url}/git/acme/widgets.git/info/refs?service=git-receive-pack`, { headers: basic(token) });
    const hook = join(f.gitRoot, '.svc-hooks', 'update');
    const zero = '0'.repeat(40);
    for (const ref of [`refs/heads/svc/${f.keys[0]}`, 'refs/heads/main']) {
      const r = await promisify(execFile)(hook, [ref, zero, zero], { env: { PATH: process.env.PATH ?? '' } }).then(
        () => 0,
        (e: { code?: number }) => e.code,
      );
      expect(r, ref).toBe(1);
    }
  });
});

describe('pieces of the remote', () => {
  it.each([
    ['Status: 404 Not Found\r\nContent-Type: text/plain\r\n\r\nbody', 404, { 'content-type': 'text/plain' }, 'body'],
    ['Content-Type: application/x-git-receive-pack-result\n\nPACK', 200, { 'content-type': 'application/x-git-receive-pack-result' }, 'PACK'],
    ['Expires: Fri, 01 Jan 1980 00:00:00 GMT\r\nPragma: no-cache\r\n\r\n', 200, { expires: 'Fri, 01 Jan 1980 00:00:00 GMT', pragma: 'no-cache' }, ''],
  ])('parses a CGI head %#', (raw, status, headers, rest) => {
    const parsed = parseCgiHead(Buffer.from(raw));
    expect(parsed?.status).toBe(status);
    expect(parsed?.headers).toEqual(headers);
    expect(parsed?.rest.toString()).toBe(rest);
  });

  it('waits for the whole head', () => {
    expect(parseCgiHead(Buffer.from('Status: 200 OK\r\nContent-Type: x'))).toBeNull();
  });

  it.each([
    ['acme/widgets', true],
    ['acme/widgets.js', true],
    ['acme/widgets.git', false],
    ['acme/../x', false],
    ['../x', false],
    ['/abs/path', false],
    ['a/b/c', false],
    ['acme/.hidden', false],
  ])('checks the repository name %s', (name, ok) => {
    expect(parseRepositoryName(name) !== null).toBe(ok);
  });
});
