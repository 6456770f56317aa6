// `svc auth` as a user types it (run in-process), against `svc server --seed demo` (run in the test's process): login reads the token
// from stdin and stores it 0600 only once the service accepted it; status shows it masked with the
// identity behind it; SVC_TOKEN wins; logout forgets it; --verbose shows request ids and timings,
// and no output ever carries a token.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { text } from 'node:stream/consumers';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { maskToken } from '../../../src/commands/auth/status.js';
import { runServerCommand } from '../../../src/server/index.js';
import { isolatedEnv, type CliEnv } from '../../support/cli.js';
import { svcInProcess } from '../../support/svc-in-process.js';
import { startLocalServer, type LocalServer } from '../../support/server-process.js';

let server: LocalServer;
/** A second token of the same member, allowed to browse only. */
let browseOnly: string;
const printed: string[] = [];
const tokens: string[] = [];

async function svc(args: string[], env: CliEnv, input?: string) {
  const r = await svcInProcess(args, { env, input });
  printed.push(r.stdout, r.stderr);
  return r;
}

/** A fresh home with the server's address and no token at all. */
const home = (extra: CliEnv = {}) => isolatedEnv({ SVC_BASE_URL: server.url, ...extra });
const configFile = (env: CliEnv) => join(env.SVC_CONFIG_DIR!, 'config.json');
const stored = (env: CliEnv) => (existsSync(configFile(env)) ? (JSON.parse(readFileSync(configFile(env), 'utf8')) as { token?: string }).token : undefined);

beforeAll(async () => {
  server = await startLocalServer();
  const out = new PassThrough();
  const err = new PassThrough();
  const code = await runServerCommand({ command: 'token-create', db: server.db, workspace: 'acme', scopes: ['project:browse'] }, { stdout: out, stderr: err });
  out.end();
  err.end();
  expect(code, await text(err)).toBe(0);
  browseOnly = (await text(out)).trim();
  expect(browseOnly).toMatch(/^svc_pat_/);
  tokens.push(server.token, browseOnly);
});

afterAll(async () => {
  const violations = await server?.stop();
  expect(violations, 'responses that break the contract document').toEqual([]);
  // Nothing svc printed in any test carries a whole token (status shows only a masked one).
  for (const t of printed) for (const token of tokens) expect(t).not.toContain(token);
});

describe('svc auth login --with-token', () => {
  test('stores the token read from stdin, in a 0600 file, once the service accepted it', async () => {
    const env = home();
    const r = await svc(['auth', 'login', '--with-token'], env, `${server.token}\n`);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe(`Logged in to ${server.url} as Ada Demo <ada@acme.test>, workspace ${r.stderr.match(/workspace (\S+)\n$/)?.[1]}\n`);
    expect(r.stdout).toBe('');
    expect(stored(env)).toBe(server.token);
    expect(statSync(configFile(env)).mode & 0o777).toBe(0o600);
    // The stored token is the one every later command uses.
    expect((await svc(['whoami'], env)).stdout).toMatch(/^Ada Demo <ada@acme.test>\n/);
  });

  test.each([
    ['a token the service does not know', 'svc_pat_000000000000000000000000000000', 3, /refused that token \(401\); nothing was stored/],
    ['a token of another kind', 'ghp_0123456789abcdef0123456789abcdef', 3, /svc_pat_/],
    ['nothing on stdin', '', 2, /no token on standard input/],
  ])('%s → exit %i, one line, nothing stored', async (_name, input, code, message) => {
    const env = home();
    tokens.push(input || 'no-token');
    const r = await svc(['auth', 'login', '--with-token'], env, `${input}\n`);
    expect(r.code).toBe(code);
    expect(r.stderr).toMatch(message);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(stored(env)).toBeUndefined();
  });

  test('a bad token does not replace the one already stored', async () => {
    const env = home();
    await svc(['auth', 'login', '--with-token'], env, server.token);
    expect((await svc(['auth', 'login', '--with-token'], env, 'svc_pat_111111111111111111111111111111')).code).toBe(3);
    expect(stored(env)).toBe(server.token);
  });

  test('with another SVC_TOKEN in the environment: stored, and a warning that SVC_TOKEN still wins', async () => {
    const env = home({ SVC_TOKEN: browseOnly });
    const r = await svc(['auth', 'login', '--with-token'], env, server.token);
    expect(r.code, r.stderr).toBe(0);
    expect(stored(env)).toBe(server.token);
    expect(r.stderr).toMatch(/^SVC_TOKEN is set and wins over the stored token until it is unset\.$/m);
  });

  test('without --with-token → exit 2 naming the way to do it', async () => {
    const r = await svc(['auth', 'login'], home(), server.token);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--with-token/);
  });

  test('refuses to send the token over plain http to a host that is not loopback, unless --insecure', async () => {
    const env = home({ SVC_BASE_URL: 'http://svc.example.invalid' });
    const r = await svc(['auth', 'login', '--with-token'], env, server.token);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--insecure/);
    expect(stored(env)).toBeUndefined();
  });
});

describe('svc auth status', () => {
  test('the masked token, its source, the user, workspace and scopes', async () => {
    const env = home();
    await svc(['auth', 'login', '--with-token'], env, server.token);
    const r = await svc(['auth', 'status'], env);
    expect(r.code, r.stderr).toBe(0);
    const me = JSON.parse((await svc(['whoami', '--json'], env)).stdout) as { user: { id: string }; workspaceId: string };
    expect(r.stdout).toBe(
      [
        server.url,
        `  user:       Ada Demo <ada@acme.test> (${me.user.id})`,
        `  workspace:  ${me.workspaceId}`,
        '  scopes:     project:browse, work_item:edit, sprint:manage, ai:plan',
        `  token:      svc_pat_********${server.token.slice(-4)} (from config)`,
        '',
      ].join('\n'),
    );
  });

  test('SVC_TOKEN wins over the stored token', async () => {
    const env = home();
    await svc(['auth', 'login', '--with-token'], env, server.token);
    const withEnv = { ...env, SVC_TOKEN: browseOnly };
    const status = JSON.parse((await svc(['auth', 'status', '--json'], withEnv)).stdout) as { token: string; source: string; permissions: string[] };
    expect(status).toMatchObject({ token: maskToken(browseOnly), source: 'SVC_TOKEN', permissions: ['project:browse'] });
    // Every other command uses it too: the browse-only token cannot edit.
    const edit = await svc(['items', 'edit', 'DEMO-6', '--priority', 'high'], withEnv);
    expect(edit.code).toBe(3);
    expect(edit.stderr.trim().split('\n')).toHaveLength(1);
  });

  test('not logged in → exit 3 with what to do', async () => {
    const r = await svc(['auth', 'status'], home());
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/not logged in: set SVC_TOKEN or run `svc auth login --with-token`/);
  });

  test('a stored token the service no longer accepts → exit 3, one line', async () => {
    const r = await svc(['auth', 'status'], home({ SVC_TOKEN: 'svc_pat_222222222222222222222222222222' }));
    expect(r.code).toBe(3);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });
});

describe('svc auth logout', () => {
  test('forgets the stored token; status then says not logged in', async () => {
    const env = home();
    await svc(['auth', 'login', '--with-token'], env, server.token);
    const r = await svc(['auth', 'logout'], env);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/Logged out/);
    expect(stored(env)).toBeUndefined();
    expect((await svc(['auth', 'status'], env)).code).toBe(3);
    expect((await svc(['auth', 'logout'], env)).stderr).toMatch(/No stored token/);
  });

  test('warns that SVC_TOKEN is still in force', async () => {
    const env = home({ SVC_TOKEN: server.token });
    const r = await svc(['auth', 'logout'], env);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/SVC_TOKEN is still set/);
  });
});

describe('--verbose', () => {
  test('adds each request with its id, status and timing on stderr; never the token', async () => {
    const r = await svc(['whoami', '--verbose'], home({ SVC_TOKEN: server.token }));
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^GET \/api\/v1\/me → 200 in \d+ ms \(request [\w.-]+\)$/m);
    expect(r.stdout).toMatch(/^Ada Demo/);
  });

  test('on a refused token: the request line, then the one-line error, exit 3', async () => {
    const bad = 'svc_pat_333333333333333333333333333333';
    tokens.push(bad);
    const r = await svc(['auth', 'login', '--with-token', '--verbose'], home(), bad);
    expect(r.code).toBe(3);
    const lines = r.stderr.trim().split('\n');
    expect(lines[0]).toMatch(/^GET \/api\/v1\/me → 401 in \d+ ms \(request [\w.-]+\)$/);
    expect(lines.at(-1)).toMatch(/^svc: .*refused that token/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});

describe('maskToken', () => {
  test.each([
    ['svc_pat_abcdefghijklmnopqrstuvwxyz', 'svc_pat_********wxyz'],
    // A short token shows only its prefix: prefix + last four would be the whole token.
    ['svc_pat_abcd', 'svc_pat_********'],
    ['svc_pat_abcdefghijklmno', 'svc_pat_********'],
  ])('%s → %s', (token, masked) => {
    expect(maskToken(token)).toBe(masked);
  });
});

describe('svc config set checks what later commands will read', () => {
  test.each([
    [['config', 'set', 'maxWait', 'soon'], /invalid duration "soon" for maxWait/],
    [['config', 'set', 'agent', 'clippy'], /unknown agent 'clippy'; presets: .*claude/],
  ])('%j → exit 2, nothing stored', async (args, message) => {
    const env = home();
    const r = await svc(args, env);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect((await svc(['config', 'get', args[2]!], env)).stdout).toBe('');
  });

  test('good values are stored and used', async () => {
    const env = home({ SVC_TOKEN: server.token });
    expect((await svc(['config', 'set', 'maxWait', '2s'], env)).code).toBe(0);
    expect((await svc(['config', 'set', 'agent', 'codex'], env)).code).toBe(0);
    expect(JSON.parse((await svc(['config', 'list', '--json'], env)).stdout)).toMatchObject({ maxWait: '2s', agent: 'codex' });
    expect((await svc(['whoami'], env)).code).toBe(0);
  });
});
