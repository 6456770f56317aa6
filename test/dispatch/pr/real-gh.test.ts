// Debian's real gh, logged in nowhere (`gh auth status` answers 1 offline): svc's local pull
// request step gives the one-line hint with the compare URL. A system test (npm run test:system):
// it needs gh from the system, and fails rather than skips without it.
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { runDispatch } from '../../../src/dispatch/lifecycle/dispatch.js';
import { createGhWriter } from '../../../src/dispatch/pr/gh.js';
import { createRedactor } from '../../../src/dispatch/redact.js';
import { run } from '../../support/cli.js';
import { copyRepoWithOrigin } from '../../support/git-remote.js';
import { startHarness, type Harness } from '../../support/engine.js';

const REAL_GH = ['/usr/bin/gh', '/usr/local/bin/gh'].find((p) => existsSync(p));
const NO_GH = "the real-gh test needs Debian's gh (apt-get install -y gh); .ci/run installs it";
const REMOTE = { host: 'github.com', owner: 'acme', name: 'shop', webUrl: 'https://github.com/acme/shop' };

let h: Harness;
beforeEach(async () => {
  h = await startHarness({ repo: (await copyRepoWithOrigin()).repo });
});
afterEach(async () => {
  await h.close();
});

it('the real gh, logged in nowhere: the one-line hint with the compare URL', async () => {
  if (!REAL_GH) throw new Error(NO_GH);
  const home = mkdtempSync(join(tmpdir(), 'svc-gh-home-'));
  const key = h.item('task', 'Add a cart');
  const writer = createGhWriter({
    gh: REAL_GH,
    remoteOf: async () => REMOTE,
    env: { PATH: process.env.PATH, HOME: home, XDG_CONFIG_HOME: home, GH_CONFIG_DIR: join(home, 'gh') },
    redact: createRedactor([]),
  });
  const pushBranch = async (repo: string, branch: string) =>
    void (await run('git', ['push', '-q', '-f', 'origin', `refs/heads/${branch}:refs/heads/${branch}`], repo));
  const s = await runDispatch(h.opts({ keys: [key], push: true, pr: true }), h.deps({ pushBranch, pullRequests: writer }));
  expect(s.legs[0]).toMatchObject({
    disposition: 'implemented',
    pullRequest: { action: 'hint', url: `https://github.com/acme/shop/compare/svc/${key}?expand=1` },
  });
});
