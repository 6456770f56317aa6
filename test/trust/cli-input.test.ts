// Bad input to the CLI: malformed keys, unknown commands and flags, bad flag values, a
// base URL that is not HTTP(S), unusable tokens, and answers from the service that are not the
// JSON the contract promises (an HTML 500 from a gateway, a body cut short, HTML where JSON was
// due) — through a fault proxy in front of the local service. Each must end with ONE line on
// stderr (no stack trace) and the exit code of README.md#exit-codes.
// Every case runs the whole command tree in-process (test/support/program.ts: the real parser,
// in-memory streams, the entry's own error reporting); one case of each table (bad input, a bad
// token, a bad answer) also runs through the real `bin/svc.js`, where the entry, the bundle and a
// closed pipe are what is proved.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { isolatedEnv, runCli, type CliEnv, type CliResult } from '../support/cli.js';
import { runProgram } from '../support/program.js';
import { startFaultProxy, type FaultProxy, type FaultRule } from '../support/fault-proxy.js';
import { startTestService, type TestService } from '../support/service.js';
import { STACK_FRAME } from './support.js';

let s: TestService;
let proxy: FaultProxy;
let env: CliEnv;
let key: string;

beforeAll(async () => {
  s = await startTestService();
  proxy = await startFaultProxy({ target: s.url });
  key = s.admin.createWorkItem({ projectKey: s.projectKey, kind: 'task', title: 'a card' }).key;
  // A short --max-wait so "the service stayed unavailable" is reached in about a second.
  env = isolatedEnv({ SVC_BASE_URL: proxy.url, SVC_TOKEN: s.token, SVC_PROJECT: s.projectKey, SVC_MAX_WAIT: '1s' });
});

afterAll(async () => {
  await proxy?.close();
  await s?.close();
});

/** Exactly one non-empty line on stderr, no stack frame, nothing of the token. */
function expectOneLine(stderr: string): void {
  const lines = stderr.trim().split('\n');
  expect(lines, stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^svc: /);
  expect(stderr).not.toMatch(STACK_FRAME);
  expect(stderr).not.toContain(s.token);
}

/** `svc ARGS` in-process, with the test's environment (or `over` on top of it). */
function svc(args: string[], over: CliEnv = {}) {
  return runProgram(args, { env: { ...env, ...over } });
}

const BAD_INPUT: [string, number, string[], RegExp][] = [
  ['unknown command', 2, ['frobnicate'], /unknown command/],
  ['unknown subcommand', 2, ['items', 'frobnicate'], /unknown command|frobnicate/],
  ['unknown flag', 2, ['run', 'PROJ-1', '--frob', '--agent-cmd', 'true'], /unknown option/],
  ['unknown global flag', 2, ['--frob', 'whoami'], /unknown option/],
  ['missing argument', 2, ['run', '--agent-cmd', 'true'], /missing required argument/],
  ['lower-case key', 2, ['items', 'show', 'proj-1'], /not a work item key/],
  ['key with two dashes', 2, ['items', 'show', 'PROJ--1'], /not a work item key/],
  ['key without a number', 2, ['items', 'show', 'PROJ-'], /not a work item key/],
  ['key with a path in it', 2, ['items', 'show', 'PROJ-1/../../me'], /not a work item key/],
  ['key with shell in it', 2, ['items', 'show', 'PROJ-1;rm -rf ~'], /not a work item key/],
  ['malformed key of a dispatch command', 2, ['run', 'PROJ-1', 'nope', '--agent-cmd', 'true', '--dry-run'], /nope/],
  ['bad duration', 2, ['--max-wait', 'soon', 'whoami'], /invalid duration/],
  ['bad idle timeout', 2, ['run', 'PROJ-1', '--agent-cmd', 'true', '--idle-timeout', '-5s'], /duration|idle/],
  ['bad --parallel', 2, ['run', 'PROJ-1', '--agent-cmd', 'true', '--parallel', 'many'], /parallel|number|integer/],
  ['bad --on-failure', 2, ['run', 'PROJ-1', '--agent-cmd', 'true', '--on-failure', 'explode'], /on-failure|explode|choices/],
  ['unknown agent preset', 2, ['run', 'PROJ-1', '--agent', 'clippy'], /clippy/],
  ['ftp base URL', 2, ['--base-url', 'ftp://127.0.0.1/', 'whoami'], /http/],
  ['file base URL', 2, ['--base-url', 'file:///etc/passwd', 'whoami'], /http/],
  ['javascript base URL', 2, ['--base-url', 'javascript:alert(1)', 'whoami'], /http|URL/],
  ['base URL without a scheme', 2, ['--base-url', '127.0.0.1:8080', 'whoami'], /http|URL/],
  ['base URL that is no URL', 2, ['--base-url', 'not a url', 'whoami'], /URL/],
];

const BAD_TOKENS: [string, number, Record<string, string | undefined>][] = [
  ['a token without the svc_pat_ prefix', 3, { SVC_TOKEN: 'ghp_0123456789abcdef0123456789abcdef0123' }],
  ['an empty token', 3, { SVC_TOKEN: '' }],
  ['no token at all', 3, { SVC_TOKEN: undefined }],
  ['a well-formed token the service does not know', 3, { SVC_TOKEN: `svc_pat_${'Q'.repeat(32)}` }],
];

describe('bad input to the CLI: one line and the documented exit code', () => {
  test.each(BAD_INPUT)('%s → exit %i', async (_name, code, args, message) => {
    const r = await svc(args);
    expect(r.code, r.stderr).toBe(code);
    expect(r.stderr).toMatch(message);
    expectOneLine(r.stderr);
  });

  test.each(BAD_TOKENS)('%s → exit %i', async (_name, code, over) => {
    const r = await svc(['whoami'], over);
    expect(r.code, r.stderr).toBe(code);
    expectOneLine(r.stderr);
  });
});

const BAD_ANSWERS: [string, number, FaultRule['fault'], string[]][] = [
  ['an HTML 500 from a gateway, on a read (retried, then given up)', 5, { kind: 'html-500' }, ['whoami']],
  ['an HTML 500 on a write (not retried)', 5, { kind: 'html-500' }, ['items', 'create', '--kind', 'task', '--title', 'x']],
  ['a body cut short', 5, { kind: 'truncate' }, ['whoami']],
  ['a body cut short on a list', 5, { kind: 'truncate', keepBytes: 7 }, ['items', 'list']],
  ['HTML with a 200', 5, { kind: 'status', status: 200, body: '<html><body>Welcome to nginx!</body></html>', contentType: 'text/html' }, ['whoami']],
  ['an empty 200', 5, { kind: 'status', status: 200, body: '' }, ['items', 'show', 'PROJ-1']],
  ['HTML with a 404', 4, { kind: 'status', status: 404, body: '<h1>Not Found</h1>', contentType: 'text/html' }, ['items', 'show', 'PROJ-1']],
  ['plain text with a 401', 3, { kind: 'status', status: 401, body: 'Unauthorized', contentType: 'text/plain' }, ['whoami']],
  ['garbage with a 422', 2, { kind: 'status', status: 422, body: '{"error":', contentType: 'application/json' }, ['items', 'list', '--filter', 'kind:task']],
  ['a 503 that never ends', 5, { kind: 'status', status: 503 }, ['whoami']],
  ['a 429 whose reset lies past --max-wait', 5, { kind: 'rate-limit', resetInMs: 30_000 }, ['whoami']],
  ['a reset on every attempt', 5, { kind: 'reset-before' }, ['whoami']],
];

describe('answers that are not the JSON the contract promises', () => {
  test.each(BAD_ANSWERS)('%s → exit %i', async (_name, code, fault, args) => {
    proxy.setPlan([{ path: /^\/api\/v1\//, fault }]);
    try {
      const r = await svc(args);
      expect(r.code, r.stderr).toBe(code);
      expectOneLine(r.stderr);
      expect(r.stdout).toBe('');
    } finally {
      proxy.setPlan([]);
    }
  });

  // A 200 whose body is JSON but not an object (a bare string for GET /me) is no answer of the
  // service: the `bad_body` fault, exit 5, not a crash in the command reading its fields.
  test('JSON of the wrong shape with a 200 → exit 5', async () => {
    proxy.setPlan([{ path: /^\/api\/v1\//, fault: { kind: 'status', status: 200, body: '"just a string"' } }]);
    try {
      const r = await svc(['whoami']);
      expect(r.code, r.stderr).toBe(5);
      expectOneLine(r.stderr);
    } finally {
      proxy.setPlan([]);
    }
  });

  test('a real key still works through the same proxy (the plan above is what failed)', async () => {
    const r = await svc(['items', 'show', key, '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ key });
  });
});

describe('run ids given to local commands', () => {
  // `svc logs ../../etc` is bad input (exit 2), not an unexpected error.
  test('a run id that climbs out of the state folder → exit 2', async () => {
    const r = await svc(['logs', '../../etc']);
    expect(r.code, r.stderr).toBe(2);
    expectOneLine(r.stderr);
  });
});

describe('a closed stdout', () => {
  // Writing to a pipe the reader closed (`svc --help | head -1`) must end quietly: no unhandled
  // EPIPE, no stack trace (fixed in 1a68238).
  test('svc --help into a pipe closed at once: no stack trace', async () => {
    const { spawn } = await import('node:child_process');
    const { BIN } = await import('../support/cli.js');
    const child = spawn(process.execPath, [BIN, '--help'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    await new Promise((done) => child.on('close', done));
    expect(stderr).not.toMatch(STACK_FRAME);
  });
});

describe('through the real bin/svc.js: one case of each table', () => {
  // The entry (cli.ts) maps errors to lines and codes for a user; the in-process runs above share
  // its runProgram, and these prove the built bundle and its process end the same way: a parser
  // error, a refused token, and a bad answer over the network (the process still exits). Every
  // other case is the same code path as its in-process row, which keeps its assertions.
  const pick = <T extends [string, ...unknown[]]>(table: T[], name: string): T => table.find((c) => c[0] === name)!;
  const spawned = (args: string[], over: CliEnv = {}): Promise<CliResult> => runCli(args, { env: { ...env, ...over }, timeoutMs: 30_000 });

  test.each([pick(BAD_INPUT, 'unknown flag')])('%s → exit %i', async (_name, code, args, message) => {
    const r = await spawned(args);
    expect(r.code, r.stderr).toBe(code);
    expect(r.stderr).toMatch(message);
    expectOneLine(r.stderr);
  });

  test.each([pick(BAD_TOKENS, 'no token at all')])('%s → exit %i', async (_name, code, over) => {
    const r = await spawned(['whoami'], over);
    expect(r.code, r.stderr).toBe(code);
    expectOneLine(r.stderr);
  });

  test.each([pick(BAD_ANSWERS, 'an HTML 500 on a write (not retried)')])('%s → exit %i', async (_name, code, fault, args) => {
    proxy.setPlan([{ path: /^\/api\/v1\//, fault }]);
    try {
      const r = await spawned(args);
      expect(r.code, r.stderr).toBe(code);
      expectOneLine(r.stderr);
      expect(r.stdout).toBe('');
    } finally {
      proxy.setPlan([]);
    }
  });
});
