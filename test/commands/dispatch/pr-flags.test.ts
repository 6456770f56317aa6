// The flags of pull requests as a user types them, through the real command tree in-process: bad
// values are one-line usage errors (exit 2) before anything is opened, and `pr` / `githubApiUrl`
// are storable.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isolatedEnv } from '../../support/cli.js';
import { svcInProcess } from '../../support/svc-in-process.js';

// Nothing listens here: a usage error must come before any connection is tried.
const env = () =>
  isolatedEnv({
    SVC_BASE_URL: 'http://127.0.0.1:9',
    SVC_TOKEN: 'svc_pat_flagstest1234',
    SVC_PROJECT: 'DEMO',
    SVC_CONFIG_DIR: mkdtempSync(join(tmpdir(), 'svc-cfg-')),
  });

describe('--pr flags', () => {
  it.each([
    [['run', 'DEMO-1', '--agent-cmd', 'true', '--pr', '--no-push'], /^svc: --pr needs the branch pushed: drop --no-push or pass --no-pr$/m],
    [['run', 'DEMO-1', '--agent-cmd', 'true', '--pr', '--github-api-url', 'not a url'], /^svc: --github-api-url: 'not a url' is not a URL/m],
    [
      ['batch', '--agent-cmd', 'true', '--github-api-url', 'ftp://ghe.example.com/api/v3'],
      /^svc: --github-api-url: 'ftp:\/\/ghe.example.com\/api\/v3' is not an http\(s\) URL$/m,
    ],
    [
      ['run', 'DEMO-1', '--agent-cmd', 'true', '--github-api-url', 'https://x:ghp_secretsecretsecret12@ghe.example.com/api/v3'],
      /^svc: --github-api-url: a URL with credentials in it is refused$/m,
    ],
    [
      ['run', 'DEMO-1', '--agent-cmd', 'true', '--github-api-url', 'http://ghe.example.com/api/v3'],
      /^svc: --github-api-url: refusing to send a GitHub token over plain http to ghe.example.com \(use https, or --insecure\)$/m,
    ],
  ])('svc %j is a usage error', async (args, message) => {
    const r = await svcInProcess(args, { env: env() });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).not.toContain('ghp_secret');
  });

  it('pr and githubApiUrl are stored; a bad stored value is refused', async () => {
    const e = env();
    expect((await svcInProcess(['config', 'set', 'pr', 'true'], { env: e })).code).toBe(0);
    expect((await svcInProcess(['config', 'set', 'githubApiUrl', 'https://ghe.example.com/api/v3'], { env: e })).code).toBe(0);
    expect((await svcInProcess(['config', 'get', 'pr'], { env: e })).stdout.trim()).toBe('true');
    const bad = await svcInProcess(['config', 'set', 'pr', 'maybe'], { env: e });
    expect(bad.code).toBe(2);
    // Stored pr=true makes --no-push a conflict, exactly as the flag does.
    const r = await svcInProcess(['run', 'DEMO-1', '--agent-cmd', 'true', '--no-push'], { env: e });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/--pr needs the branch pushed/);
  });
});

describe('continue keeps --pr', () => {
  it.each([
    [{}, { pr: true, draft: true }, { pr: true, draft: true }],
    [{ pr: false }, { pr: true, draft: false }, { pr: false }],
    [{}, { pr: false }, {}],
  ])('flags %j over recorded %j', async (flags, recorded, expected) => {
    const { continueFlags } = await import('../../../src/commands/dispatch/continue-flags.js');
    const out = continueFlags(flags, recorded);
    expect({ pr: out.pr, draft: out.draft }).toEqual({ pr: undefined, draft: undefined, ...expected });
  });
});
