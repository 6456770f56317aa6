// A local `svc run KEY --pr` as a user types it (the first run the real bin/svc.js, the second
// in-process through the same command tree): the branch is pushed with the user's git, and the pull
// request is opened through `gh` on PATH — here the stand-in that records its argv and body files.
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isolatedEnv, makeRepo, run, runCli } from '../../support/cli.js';
import { startTestService, type TestService } from '../../support/service.js';
import { svcInProcess } from '../../support/svc-in-process.js';

const AGENT =
  'sh -c "echo x >> card-$SVC_CARD_KEY.txt && git add -A && git -c user.name=a -c user.email=a@example.invalid commit -qm \\"$SVC_CARD_KEY: cart\\" && echo All done."';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc?.close();
});

describe('svc run --pr on a local run', () => {
  it('pushes svc/KEY and opens its pull request through gh; a second run edits it', async () => {
    const repo = await makeRepo();
    const bare = mkdtempSync(join(tmpdir(), 'svc-origin-'));
    await run('git', ['init', '-q', '--bare', bare]);
    // The fetch URL says GitHub; pushes land in the bare repository (a plain `run` never fetches).
    await run('git', ['remote', 'add', 'origin', 'https://github.com/acme/shop.git'], repo);
    await run('git', ['config', 'remote.origin.pushurl', bare], repo);
    const bin = mkdtempSync(join(tmpdir(), 'svc-bin-'));
    symlinkSync(resolve(import.meta.dirname, 'fake-gh.mjs'), join(bin, 'gh'));
    const ghDir = join(bin, 'state');
    mkdirSync(ghDir);
    const key = svc.admin.createWorkItem({ projectKey: svc.projectKey, kind: 'task', title: 'Add a cart', type: 'code' }).key;
    const env = isolatedEnv({
      SVC_BASE_URL: svc.url,
      SVC_TOKEN: svc.token,
      SVC_PROJECT: svc.projectKey,
      PATH: `${bin}:${process.env.PATH}`,
      FAKE_GH_DIR: ghDir,
      FAKE_GH_LOGGED_IN: '1',
    });

    // Spawned: the file's one run of the bundle in dist/ as a user's shell starts it.
    const first = await runCli(['run', key, '--pr', '--agent-cmd', AGENT, '--json'], { env, cwd: repo });
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout).legs[0]).toMatchObject({
      disposition: 'implemented',
      pullRequest: { action: 'opened', url: 'https://github.com/acme/shop/pull/1' },
    });
    expect((await run('git', ['rev-parse', `refs/heads/svc/${key}`], bare)).trim()).toBe(
      (await run('git', ['rev-parse', `refs/heads/svc/${key}`], repo)).trim(),
    );
    const second = await svcInProcess(['run', key, '--pr', '--agent-cmd', AGENT], { env, cwd: repo });
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toContain(`${key}: pull request updated: https://github.com/acme/shop/pull/1`);

    const calls = readFileSync(join(ghDir, 'calls.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { argv: string[]; body: string | null; env: string[] });
    expect(calls.filter((c) => c.argv[0] === 'pr').map((c) => c.argv[1])).toEqual(['list', 'create', 'list', 'edit']);
    const create = calls.find((c) => c.argv[1] === 'create')!;
    expect(create.argv).toEqual(expect.arrayContaining(['--repo', 'github.com/acme/shop', '--head', `svc/${key}`, '--body-file']));
    expect(create.body).toContain('All done.');
    for (const c of calls) {
      expect(c.env).toEqual([]);
      expect(JSON.stringify(c)).not.toContain(svc.token);
    }
  });
});
