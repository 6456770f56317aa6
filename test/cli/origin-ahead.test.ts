// A lane selection asks origin's svc/* branches beside its listing, not after it
// (src/dispatch/select/prior-work.ts). A question asked ahead must cost a selection that needs no
// answer nothing: with nothing ready, svc neither waits for an origin that does not answer nor warns
// about it. Run as a process: what would keep svc waiting is a git child it never reaps.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isolatedEnv, makeRepo, run, runCli } from '../support/cli.js';
import { startTestService, type TestService } from '../support/service.js';

let s: TestService;
beforeAll(async () => {
  s = await startTestService();
});
afterAll(async () => {
  await s.close();
});

describe("origin's branches asked beside the listing", () => {
  it('with nothing ready, an origin that never answers costs no wait and no warning', async () => {
    const origin = join(mkdtempSync(join(tmpdir(), 'svc-origin-')), 'origin.git');
    await run('git', ['clone', '-q', '--bare', await makeRepo(), origin]);
    const repo = join(mkdtempSync(join(tmpdir(), 'svc-machine-')), 'repo');
    await run('git', ['clone', '-q', origin, repo]);
    // git runs this before upload-pack answers: the ls-remote would wait a minute.
    await run('git', ['config', 'remote.origin.uploadpack', 'sleep 60; git-upload-pack'], repo);
    const env = isolatedEnv({ SVC_BASE_URL: s.url, SVC_TOKEN: s.token, SVC_PROJECT: s.projectKey });
    const t0 = Date.now();
    const r = await runCli(['batch', '--json', '--agent-cmd', 'true', '--repo', repo], { env, timeoutMs: 30_000 });
    expect(r.signal, 'svc waited for origin until the test killed it').toBeNull();
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).runId).toBeNull();
    expect(r.stderr).not.toContain('could not read origin');
    // Far below the minute origin would take (and the 20 s svc would give it).
    expect(Date.now() - t0).toBeLessThan(15_000);
  }, 40_000);
});
