// `--jq EXPR` beside `--json`, as gh has: the documents of docs/json.md, filtered by jq itself
// (jq-wasm). Each case compares the filtered output with the same selection made in JavaScript on
// the command's own `--json` document.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isolatedEnv, makeRepo, type CliEnv } from '../support/cli.js';
import { startLocalServer, type LocalServer } from '../support/server-process.js';
import { svcInProcess } from '../support/svc-in-process.js';

let server: LocalServer;
let env: CliEnv;
beforeAll(async () => {
  server = await startLocalServer();
  env = isolatedEnv({ SVC_BASE_URL: server.url, SVC_TOKEN: server.token, SVC_PROJECT: 'DEMO' });
});
afterAll(async () => {
  expect(await server.stop()).toEqual([]);
});

type Doc = Record<string, unknown> & Record<number, unknown>;
const rows = (text: string) => text.split('\n').filter(Boolean);

describe('--jq on the documents of docs/json.md', () => {
  it.each([
    // [command, jq expression, the same in JavaScript on the --json document, one value per line]
    [['items', 'list'], '.[].key', (d: Doc[]) => d.map((i) => i.key)],
    [['items', 'list'], '[.[] | select(.kind == "bug")] | length', (d: Doc[]) => [d.filter((i) => i.kind === 'bug').length]],
    [
      ['items', 'show', 'DEMO-4'],
      '.readiness.openBlockers[].key',
      (d: Doc) => (d.readiness as { openBlockers: { key: string }[] }).openBlockers.map((b) => b.key),
    ],
    [['whoami'], '.user.email', (d: Doc) => [(d.user as { email: string }).email]],
    [['projects'], '.[] | "\\(.key) \\(.name)"', (d: Doc[]) => d.map((p) => `${p.key} ${p.name}`)],
    [['help', 'exit-codes'], '.[] | select(.code == 4) | .meaning', (d: Doc[]) => d.filter((c) => c.code === 4).map((c) => c.meaning)],
    [['ready', 'containers'], '.[0].key', (d: Doc[]) => [(d[0] as Doc).key]],
  ] as const)('svc %j --jq %s', async (args, expression, inJs) => {
    const json = await svcInProcess([...args, '--json'], { env });
    expect(json.code, json.stderr).toBe(0);
    const filtered = await svcInProcess([...args, '--jq', expression], { env });
    expect(filtered.code, filtered.stderr).toBe(0);
    // Strings print raw, as gh's --jq prints them; numbers as JSON.
    expect(rows(filtered.stdout)).toEqual((inJs as (d: never) => unknown[])(JSON.parse(json.stdout) as never).map(String));
    expect(filtered.stderr).toBe('');
  });

  it('an object or array prints as JSON', async () => {
    const r = await svcInProcess(['items', 'show', 'DEMO-3', '--jq', '{key, kind}'], { env });
    expect(JSON.parse(r.stdout)).toEqual({ key: 'DEMO-3', kind: 'subtask' });
  });

  it.each([
    ['.[', /^svc: --jq: syntax error, unexpected end of file/],
    ['.[0] | error("boom")', /^svc: --jq: boom$/],
  ])('%s: one line, exit 2, nothing on stdout', async (expression, message) => {
    const r = await svcInProcess(['items', 'list', '--jq', expression], { env });
    expect([r.code, r.stdout]).toEqual([2, '']);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr.trim()).toMatch(message);
  });

  it('a dispatch command refuses an expression that does not compile before any run opens', async () => {
    const e = { ...env, ...isolatedEnv({ SVC_BASE_URL: server.url, SVC_TOKEN: server.token }) };
    const r = await svcInProcess(['run', 'DEMO-6', '--agent-cmd', 'true', '--repo', await makeRepo(), '--jq', '.runId |'], { env: e });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^svc: --jq: syntax error/);
    expect(existsSync(join(e.SVC_STATE_DIR!, 'runs'))).toBe(false);
  });
});
