// A credential in the repository's own git config (docs/trust.md: what actions/checkout writes
// by default, a clone URL with a token) is one an agent can read: svc names its key in one warning
// at the start of the run, never its value.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isolatedEnv, makeRepo, run, type CliEnv } from '../support/cli.js';
import { startLocalServer, type LocalServer } from '../support/server-process.js';
import { svcInProcess } from '../support/svc-in-process.js';

let server: LocalServer;
let env: CliEnv;

beforeAll(async () => {
  server = await startLocalServer();
  env = isolatedEnv({ SVC_BASE_URL: server.url, SVC_TOKEN: server.token, SVC_PROJECT: 'DEMO' });
}, 60_000);

afterAll(async () => {
  await server?.stop();
});

async function card(title: string): Promise<string> {
  const made = await svcInProcess(['items', 'create', '--kind', 'task', '--title', title, '--json'], { env });
  expect(made.code, made.stderr).toBe(0);
  return (JSON.parse(made.stdout) as { key: string }).key;
}

describe("a credential in the repository's git config", () => {
  it('is named in one warning at the start of the run, its value never', async () => {
    const repo = await makeRepo();
    // As actions/checkout leaves it by default, and a clone URL with a token in it.
    await run('git', ['config', 'http.https://github.com/.extraheader', 'AUTHORIZATION: basic xyz-header-secret'], repo);
    await run('git', ['remote', 'add', 'upstream', 'https://ci:url-password-7@example.invalid/acme/widgets.git'], repo);
    // In a file the config includes, as newer actions/checkout keeps it.
    const included = join(mkdtempSync(join(tmpdir(), 'svc-included-')), 'credentials.config');
    writeFileSync(included, '[http "https://gitlab.example/"]\n\textraheader = AUTHORIZATION: basic included-secret-3\n');
    await run('git', ['config', `includeIf.gitdir:${repo}/.git.path`, included], repo);
    // A token in a key: the key is named without it.
    await run('git', ['config', 'url.https://x-access-token:tok-insteadof-9@github.com/.insteadOf', 'https://github.com/'], repo);
    const keys = [await card('one'), await card('two')];
    const r = await svcInProcess(['run', ...keys, '--agent-cmd', 'true', '--allow-empty', '--repo', repo, '--json'], { env });
    expect(r.code, r.stderr).toBe(0);
    const warnings = r.stderr.split('\n').filter((l) => l.includes('git config holds a credential'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('http.https://github.com/.extraheader');
    expect(warnings[0]).toContain('remote.upstream.url');
    expect(warnings[0]).toContain('url.https://…@github.com/.insteadof');
    expect(warnings[0]).toContain('http.https://gitlab.example/.extraheader');
    expect(r.stderr + r.stdout).not.toMatch(/xyz-header-secret|url-password-7|tok-insteadof-9|x-access-token|included-secret-3/);
  });

  it('says nothing for a clean config', async () => {
    const r = await svcInProcess(['run', await card('clean'), '--agent-cmd', 'true', '--allow-empty', '--repo', await makeRepo(), '--json'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toContain('git config holds a credential');
  });
});
