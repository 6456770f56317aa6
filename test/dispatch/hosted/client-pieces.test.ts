// The client's pieces on their own: the broker's refresh rule, the helper protocol (fails closed,
// store is a no-op), the credential socket's file modes, git's environment and configuration, and
// the two commands. The broker's source here is a counting stand-in for getGitCredential (the wire is
// covered end to end in hosted-run.test.ts); everything else is real.
import { execFile } from 'node:child_process';
import { statSync } from 'node:fs';
import { PassThrough, Writable } from 'node:stream';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { Command } from 'commander';
import { runAttach } from '../../../src/commands/hosted/attach.js';
import { registerHosted } from '../../../src/commands/hosted/register.js';
import { runGitCredentialCommand } from '../../../src/commands/hosted/git-credential.js';
import type { GitCredential } from '../../../src/contract/types.js';
import {
  CREDENTIAL_SOCKET_ENV,
  credentialConfig,
  gitEnv,
  GitCredentialBroker,
  helperCommand,
  runGitCredential,
  startCredentialServer,
  targetRepositoriesOf,
  type CredentialServer,
} from '../../../src/dispatch/hosted/index.js';
import { testContext } from '../../support/context.js';
import { hostedFixture, type HostedFixture } from '../../support/hosted.js';

const HOUR = 3_600_000;

function countingSource(lifetimeMs: number, clock: { t: number }, repos = ['acme/widgets', 'acme/gadgets']) {
  const source = {
    calls: 0,
    async getGitCredential() {
      source.calls += 1;
      const token = `ghs_${String(source.calls).padStart(36, '0')}`;
      const expiresAt = new Date(clock.t + lifetimeMs).toISOString();
      const credentials: GitCredential[] = repos.map((repository) => ({
        repository,
        url: `http://127.0.0.1:9/git/${repository}.git`,
        username: 'x-access-token',
        token,
        expiresAt,
      }));
      return { credentials, dispatchedBy: null };
    },
  };
  return source;
}

describe('GitCredentialBroker', () => {
  it('reuses a one-hour token until 5 minutes are left, then trades again', async () => {
    const clock = { t: Date.parse('2026-01-01T00:00:00Z') };
    const api = countingSource(HOUR, clock);
    const broker = new GitCredentialBroker({ api, runId: 'run_1', now: () => clock.t });
    const first = await broker.credentialFor('acme/widgets');
    clock.t += 54 * 60_000;
    expect((await broker.credentialFor('acme/gadgets')).token).toBe(first.token);
    expect(api.calls).toBe(1);
    clock.t += 2 * 60_000; // 4 minutes left
    expect((await broker.credentialFor('acme/widgets')).token).not.toBe(first.token);
    expect(api.calls).toBe(2);
  });

  it('refreshes a short-lived token at half its lifetime, not on every request', async () => {
    const clock = { t: 0 };
    const api = countingSource(2_000, clock);
    const broker = new GitCredentialBroker({ api, runId: 'run_1', now: () => clock.t });
    await broker.credentialFor('acme/widgets');
    clock.t = 900;
    await broker.credentialFor('acme/widgets');
    expect(api.calls).toBe(1);
    clock.t = 1_000;
    await broker.credentialFor('acme/widgets');
    expect(api.calls).toBe(2);
  });

  it('shares one trade among concurrent requests, drops an erased token, and refuses unknown repositories', async () => {
    const clock = { t: 0 };
    const api = countingSource(HOUR, clock);
    const broker = new GitCredentialBroker({ api, runId: 'run_1', now: () => clock.t });
    const [a, b] = await Promise.all([broker.credentialFor('acme/widgets'), broker.credentialFor('acme/gadgets')]);
    expect(api.calls).toBe(1);
    expect(a.token).toBe(b.token);
    expect(broker.invalidate(a.token)).toBe(true);
    expect((await broker.credentialFor('acme/widgets')).token).not.toBe(a.token);
    expect(api.calls).toBe(2);
    await expect(broker.credentialFor('acme/other')).rejects.toThrow(/no git credential/);
    expect(broker.secrets()).toHaveLength(api.calls);
  });

  it.each([
    [{ protocol: 'http', host: '127.0.0.1:9', path: 'git/acme/widgets.git' }, 'acme/widgets'],
    [{ protocol: 'http', host: '127.0.0.1:9', path: 'git/acme/gadgets' }, 'acme/gadgets'],
    [{ protocol: 'https', host: '127.0.0.1:9', path: 'git/acme/widgets.git' }, null],
    [{ protocol: 'http', host: '127.0.0.1:10', path: 'git/acme/widgets.git' }, null],
    [{ protocol: 'http', host: '127.0.0.1:9' }, null],
    [{ protocol: 'http', host: '127.0.0.1:9', path: 'git/acme/other.git' }, null],
  ])("matches git's question %j to %s", async (query, repository) => {
    const clock = { t: 0 };
    const broker = new GitCredentialBroker({ api: countingSource(HOUR, clock), runId: 'run_1', now: () => clock.t });
    expect((await broker.credentialForQuery(query))?.repository ?? null).toBe(repository);
  });
});

class Sink extends Writable {
  text = '';
  override _write(chunk: Buffer, _e: BufferEncoding, done: () => void) {
    this.text += chunk.toString();
    done();
  }
}

describe('svc git-credential', () => {
  let server: CredentialServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  const ask = async (action: string, input: string, env: Record<string, string | undefined>) => {
    const stdin = new PassThrough();
    stdin.end(input);
    const stdout = new Sink();
    const status = await runGitCredential(action, { stdin, stdout, env });
    return { status, stdout: stdout.text };
  };

  it('answers a matching get, and fails closed with nothing printed otherwise', async () => {
    const clock = { t: 0 };
    const broker = new GitCredentialBroker({ api: countingSource(HOUR, clock), runId: 'run_1', now: () => clock.t });
    server = await startCredentialServer(broker);
    expect(statSync(server.socketPath).mode & 0o777).toBe(0o600);
    expect(statSync(server.socketPath.replace(/\/[^/]+$/, '')).mode & 0o777).toBe(0o700);
    const env = { [CREDENTIAL_SOCKET_ENV]: server.socketPath };

    const hit = await ask('get', 'protocol=http\nhost=127.0.0.1:9\npath=git/acme/widgets.git\n\n', env);
    expect(hit).toEqual({ status: 0, stdout: `username=x-access-token\npassword=ghs_${'1'.padStart(36, '0')}\n` });
    expect(await ask('get', 'protocol=http\nhost=evil.example\npath=git/acme/widgets.git\n\n', env)).toEqual({ status: 1, stdout: '' });
    expect(await ask('get', 'protocol=http\nhost=127.0.0.1:9\n\n', env)).toEqual({ status: 1, stdout: '' });
    expect(await ask('get', 'protocol=http\nhost=127.0.0.1:9\npath=git/acme/widgets.git\n\n', {})).toEqual({ status: 1, stdout: '' });
    expect(
      await ask('get', 'protocol=http\nhost=127.0.0.1:9\npath=git/acme/widgets.git\n\n', { [CREDENTIAL_SOCKET_ENV]: `${server.socketPath}.gone` }),
    ).toEqual({ status: 1, stdout: '' });
    expect(await ask('store', 'protocol=http\nhost=127.0.0.1:9\nusername=x\npassword=y\n\n', env)).toEqual({ status: 0, stdout: '' });
    expect(await ask('capability', '', env)).toEqual({ status: 0, stdout: '' });
    // erase drops the token the broker handed out: the next get carries a fresh one.
    expect(await ask('erase', `protocol=http\nhost=127.0.0.1:9\npath=git/acme/widgets.git\npassword=ghs_${'1'.padStart(36, '0')}\n\n`, env)).toEqual({
      status: 0,
      stdout: '',
    });
    const again = await ask('get', 'protocol=http\nhost=127.0.0.1:9\npath=git/acme/widgets.git\n\n', env);
    expect(again.stdout).toContain(`password=ghs_${'2'.padStart(36, '0')}`);
  });

  it("is a hidden command of the tree that hands git's action to the protocol", async () => {
    const clock = { t: 0 };
    const broker = new GitCredentialBroker({ api: countingSource(HOUR, clock), runId: 'run_1', now: () => clock.t });
    server = await startCredentialServer(broker);
    const ctx = testContext({ env: { [CREDENTIAL_SOCKET_ENV]: server.socketPath }, stdin: 'protocol=http\nhost=127.0.0.1:9\npath=git/acme/gadgets.git\n\n' });
    const program = new Command('svc').exitOverride();
    registerHosted(program, () => ctx);
    expect(program.helpInformation()).not.toContain('git-credential');
    expect(program.helpInformation()).toContain('attach');
    await program.parseAsync(['git-credential', 'get'], { from: 'user' });
    expect(ctx.stdout.text).toBe(`username=x-access-token\npassword=ghs_${'1'.padStart(36, '0')}\n`);
  });

  it('exits 1 through the command with nothing on stdout when there is no broker', async () => {
    const ctx = testContext({ stdin: 'protocol=https\nhost=example.com\npath=a/b.git\n\n' });
    const err = await runGitCredentialCommand({ action: 'get' }, ctx).then(
      () => null,
      (e: unknown) => e as { exitCode?: number },
    );
    expect(err?.exitCode).toBe(1);
    expect(ctx.stdout.text).toBe('');
    await runGitCredentialCommand({ action: 'store' }, testContext({ stdin: 'protocol=https\n\n' }));
  });
});

describe('git environment and configuration', () => {
  it('keeps only the allowlist, never a service token, and disables prompts', () => {
    const env = gitEnv(
      {
        PATH: '/bin',
        HOME: '/h',
        LANG: 'C',
        SVC_TOKEN: 'svc_pat_x',
        SVC_RUN_TOKEN: 'svc_run_x',
        GIT_ASKPASS: '/bin/ask',
        EDITOR: 'vi',
        PAGER: 'less',
        GITHUB_TOKEN: 'ghp_x',
        GIT_CONFIG_PARAMETERS: "'x'",
      },
      '/tmp/s.sock',
    );
    expect(env).toEqual({ PATH: '/bin', HOME: '/h', LANG: 'C', GIT_TERMINAL_PROMPT: '0', [CREDENTIAL_SOCKET_ENV]: '/tmp/s.sock' });
  });

  it('orders a blank helper before ours, with the URL path and no askPass', () => {
    const config = credentialConfig(['/usr/bin/node', '/opt/svc/bin/svc.js', 'git-credential']);
    expect(config).toEqual([
      ['credential.helper', ''],
      ['credential.helper', '!/usr/bin/node /opt/svc/bin/svc.js git-credential'],
      ['credential.useHttpPath', 'true'],
      ['core.askPass', ''],
    ]);
  });

  it('quotes helper paths for the shell git runs them through', async () => {
    const argv = ['/bin/echo', "it's a path/with space", '$HOME'];
    const command = helperCommand(argv).slice(1);
    const { stdout } = await promisify(execFile)('sh', ['-c', `${command} get`]);
    expect(stdout).toBe("it's a path/with space $HOME get\n");
  });

  it.each([
    [
      {
        targetRepositories: [{ ref: 'acme/a', name: 'a', role: 'target', label: null, state: 'active', primary: true }],
        targetRepos: ['acme/b'],
        targetRepo: 'acme/a',
      },
      ['acme/a', 'acme/b'],
    ],
    [{ targetRepositories: [], targetRepos: [], targetRepo: 'acme/c' }, ['acme/c']],
    [{ targetRepositories: [], targetRepos: [], targetRepo: null }, []],
  ])("reads a card's repositories %#", (item, expected) => {
    expect(targetRepositoriesOf(item)).toEqual(expected);
  });
});

describe('svc attach', () => {
  let fixture: HostedFixture | undefined;
  afterEach(async () => {
    await fixture?.svc.close();
    fixture = undefined;
  });

  it('reads the run with its own credential and shows the legs it would execute, minting no git token', async () => {
    const f = (fixture = await hostedFixture());
    const ctx = testContext({ env: f.env, globals: { json: true } });
    await runAttach({ hosted: { helperArgv: f.helperArgv } }, ctx);
    const plan = JSON.parse(ctx.stdout.text);
    expect(plan).toMatchObject({ runId: f.runId, command: 'run', origin: 'hosted', push: true });
    expect(plan.legs).toEqual([
      { workItemKey: f.keys[0], disposition: 'queued', title: 'Add a widget', repositories: ['acme/widgets'], branch: `svc/${f.keys[0]}` },
    ]);
    const minted = f.svc.db.prepare('SELECT COUNT(*) AS n FROM git_tokens WHERE run_id = ?').get(f.runId) as { n: number };
    expect(minted.n).toBe(0);
    expect(ctx.stdout.text).not.toContain(f.runToken);
  });

  it('refuses outside a hosted run (exit 3)', async () => {
    const err = await runAttach({}, testContext({ env: { SVC_BASE_URL: 'http://127.0.0.1:9' } })).then(
      () => null,
      (e: unknown) => e as { exitCode?: number },
    );
    expect(err?.exitCode).toBe(3);
  });
});
