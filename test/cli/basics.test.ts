// The CLI as a user meets it, parsed and run in-process (test/support/svc-in-process.ts): help, usage
// errors and exit codes, config. The spawned bin/svc.js is test/cli/e2e.test.ts's.
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { isolatedEnv } from '../support/cli.js';
import { svcInProcess } from '../support/svc-in-process.js';

describe('svc basics', () => {
  test('--help lists every dispatch command and exits 0', async () => {
    const r = await svcInProcess(['--help']);
    expect(r.code).toBe(0);
    for (const c of ['next', 'run', 'run_scope', 'batch', 'auto', 'fix', 'continue', 'review']) expect(r.stdout).toMatch(new RegExp(`\\n  ${c}\\b`));
  });

  test.each([
    [['frobnicate'], /unknown command 'frobnicate'/],
    [['run', 'PROJ-1', '--no-such-flag'], /unknown option '--no-such-flag'/],
    [['run'], /missing required argument 'keys'/],
    [['run', 'PROJ-1', '--on-failure', 'explode'], /on-failure/],
    [['completion', 'tcsh'], /tcsh/],
  ])('usage error %j → one line on stderr, exit 2', async (args, message) => {
    const r = await svcInProcess(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  test('help exit-codes prints the exit-code table of the README', async () => {
    const r = await svcInProcess(['help', 'exit-codes']);
    expect(r.code).toBe(0);
    for (const code of ['0', '1', '2', '3', '4', '5', '6', '130', '143']) expect(r.stdout).toMatch(new RegExp(`^\\s*${code}  `, 'm'));
  });

  test('every command has a description and at least one example', async () => {
    const top = await svcInProcess(['--help']);
    const commands = [...top.stdout.matchAll(/^  ([a-z_]+)/gm)].map((m) => m[1]!).filter((c) => c !== 'help');
    expect(commands.length).toBeGreaterThan(15);
    for (const c of ['run', 'batch', 'whoami', 'api', 'logs']) {
      const r = await svcInProcess([c, '--help']);
      expect(r.stdout, c).toMatch(/Examples:\n  \$ svc /);
    }
  });
});

describe('settings and tokens', () => {
  test('config set/get/list/unset round-trips, and the file is mode 0600', async () => {
    const env = isolatedEnv();
    expect((await svcInProcess(['config', 'set', 'project', 'ABC'], { env })).code).toBe(0);
    expect((await svcInProcess(['config', 'get', 'project'], { env })).stdout.trim()).toBe('ABC');
    const list = await svcInProcess(['config', 'list', '--json'], { env });
    expect(JSON.parse(list.stdout)).toMatchObject({ project: 'ABC' });
    expect(statSync(join(env.SVC_CONFIG_DIR!, 'config.json')).mode & 0o777).toBe(0o600);
    await svcInProcess(['config', 'unset', 'project'], { env });
    expect((await svcInProcess(['config', 'get', 'project'], { env })).stdout).toBe('');
  });

  test.each([
    [['config', 'set', 'colour', 'red'], 2, /unknown setting 'colour'/],
    [['config', 'set', 'parallel', 'zero'], 2, /whole number/],
    [['config', 'set', 'baseUrl', 'ftp://x'], 2, /http/],
  ])('config %j → exit %i', async (args, code, message) => {
    const r = await svcInProcess(args);
    expect(r.code).toBe(code);
    expect(r.stderr).toMatch(message);
  });

  test.each([
    ['no token at all', {}, 3, /not logged in/],
    ['a token without the svc_pat_ prefix', { SVC_TOKEN: 'ghp_abcdef' }, 3, /svc_pat_/],
    ['a base URL that is not HTTP', { SVC_TOKEN: 'svc_pat_x', SVC_BASE_URL: 'ftp://example.com' }, 2, /http/],
    ['a base URL that is not a URL', { SVC_TOKEN: 'svc_pat_x', SVC_BASE_URL: 'not a url' }, 2, /not a URL/],
    ['plain http to a remote host', { SVC_TOKEN: 'svc_pat_x', SVC_BASE_URL: 'http://svc.example.com' }, 2, /insecure/],
  ])('whoami with %s fails before any request', async (_name, extra, code, message) => {
    const r = await svcInProcess(['whoami'], { env: isolatedEnv(extra) });
    expect(r.code).toBe(code);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).not.toMatch(/ghp_abcdef|svc_pat_x/);
  });

  test('the service being down is exit 5 after --max-wait, one line', async () => {
    const r = await svcInProcess(['whoami', '--max-wait', '1s'], { env: isolatedEnv({ SVC_TOKEN: 'svc_pat_x', SVC_BASE_URL: 'http://127.0.0.1:9' }) });
    expect(r.code).toBe(5);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });
});
