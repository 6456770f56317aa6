// The engine under a user's global git configuration that signs every commit (with a signer that
// fails) and has hooks refusing every commit and checkout (test/support/hostile-git.ts). svc's own
// checkouts go on when only the user's post-checkout hook failed (git passes the hook's status on
// after the checkout is made), and svc's own commit is neither signed nor hooked. The agents here
// commit with --no-verify and no signing: what an agent's own commits meet is the agent's business.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { runDispatch } from '../../../src/dispatch/lifecycle/dispatch.js';
import { run } from '../../support/cli.js';
import { hostileGitConfig } from '../../support/hostile-git.js';
import { commitOnRemoteOnly, copyRepoWithOrigin, openDelivery, refOf } from '../../support/git-remote.js';
import { startHarness, type Harness } from '../../support/engine.js';

const AGENT = 'git -c user.name=agent -c user.email=agent@example.invalid -c commit.gpgsign=false commit -q --no-verify --allow-empty -m "{key}: done"';
const config = hostileGitConfig();

let h: Harness;
let origin: string;
beforeEach(async () => {
  const copy = await copyRepoWithOrigin();
  h = await startHarness({ repo: copy.repo });
  origin = copy.origin;
});
afterEach(async () => {
  await h.close();
});

/** From here on, git run in this process (svc's own) reads the user's configuration. */
const asTheUser = () => vi.stubEnv('GIT_CONFIG_GLOBAL', config);

describe("a user's git configuration", () => {
  it.each([true, false])('run: the card branch is checked out and the leg implemented (worktree: %s)', async (worktree) => {
    const key = h.item('task', 'A');
    asTheUser();
    const s = await runDispatch(h.opts({ keys: [key], worktree, agent: { agentCmd: AGENT } }), h.deps());
    expect(s.legs.map((l) => [l.disposition, l.reason])).toEqual([['implemented', null]]);
    expect(await run('git', ['log', '-1', '--format=%s', `svc/${key}`], h.repo)).toBe(`${key}: done\n`);
  });

  it('fix: the pull request head is fetched and checked out on svc/KEY, and the agent works on it', async () => {
    const key = h.item('task', 'fix me', { deliveries: [openDelivery()] });
    const head = await commitOnRemoteOnly(origin, `svc/${key}`, 'feature.txt');
    asTheUser();
    const s = await runDispatch(h.opts({ command: 'fix', keys: [key], agent: { agentCmd: `sh -c 'test -f feature.txt && ${AGENT}'` } }), h.deps());
    expect(s.legs.map((l) => [l.disposition, l.reason])).toEqual([['implemented', null]]);
    expect(await run('git', ['rev-parse', `svc/${key}~1`], h.repo)).toBe(`${head}\n`);
  });

  it('review: the detached worktree is made, and the files the agent left are committed on the side branch by svc', async () => {
    const key = h.item('task', 'review me', { deliveries: [openDelivery({ ci: null })] });
    await commitOnRemoteOnly(origin, `svc/${key}`, 'feature.txt');
    asTheUser();
    const s = await runDispatch(h.opts({ command: 'review', keys: [key], agent: { agentCmd: 'sh -c "echo scribble > notes.txt; echo done"' } }), h.deps());
    expect(s.legs[0]).toMatchObject({ disposition: 'failed', reason: 'changed files during review' });
    const side = `svc/review/${key}/${s.runId}`;
    expect(await refOf(h.repo, `refs/heads/${side}`)).not.toBeNull();
    expect(await run('git', ['show', `${side}:notes.txt`], h.repo)).toBe('scribble\n');
  });
});
