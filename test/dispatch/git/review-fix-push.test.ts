// review changes nothing and never pushes; fix works on the pull request's own head (fetched from
// origin) and pushes there fast-forward; --push pushes an implemented leg's branch to origin.
import { readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LEGS_OWNER_FILE, LEGS_ROOT_PREFIX } from '../../../src/dispatch/boundary/leg-folder.js';
import { DEFAULT_POOL } from '../../../src/dispatch/boundary/user.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { pushToOrigin } from '../../../src/dispatch/git/delivery.js';
import { Journal } from '../../../src/dispatch/wire/journal.js';
import { runDispatch } from '../../../src/dispatch/lifecycle/dispatch.js';
import type { BranchPushed } from '../../../src/dispatch/lifecycle/types.js';
import { runPaths } from '../../../src/dispatch/state/folder.js';
import { run } from '../../support/cli.js';
import { commitOnRemoteOnly, copyRepoWithOrigin, openDelivery, refOf } from '../../support/git-remote.js';
import { COMMITTING_AGENT, startHarness, type Harness } from '../../support/engine.js';

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

function journalEvents(runId: string) {
  const j = Journal.open(runPaths(h.stateDir, runId).journal);
  try {
    return j
      .reader(0)
      .read(1000, 1 << 24)
      .map((e) => e.ev);
  } finally {
    j.close();
  }
}

describe('review', () => {
  it('a committing review agent fails the leg, its change kept on svc/review/KEY/RUN, nothing pushed', async () => {
    const key = h.item('task', 'review me', { deliveries: [openDelivery()] });
    const head = await commitOnRemoteOnly(origin, `svc/${key}`, 'feature.txt');
    const pushed: BranchPushed[] = [];
    const s = await runDispatch(
      h.opts({ command: 'review', keys: [key], push: true, agent: { agentCmd: `sh -c "echo LGTM but I fixed a typo; ${COMMITTING_AGENT.slice(7, -1)}"` } }),
      h.deps({ pushBranch: pushToOrigin, onBranchPushed: async (p) => void pushed.push(p) }),
    );
    expect(s).toMatchObject({ status: 'failed', exitCode: 1 });
    expect(s.legs[0]).toMatchObject({ disposition: 'failed', reason: 'changed files during review' });
    const side = `svc/review/${key}/${s.runId}`;
    const kept = await refOf(h.repo, `refs/heads/${side}`);
    expect(kept).not.toBeNull();
    // The agent worked on the pull request's head, and its commit sits on the side branch.
    expect(
      await run('git', ['merge-base', '--is-ancestor', head, kept!], h.repo).then(
        () => true,
        () => false,
      ),
    ).toBe(true);
    expect(await refOf(h.repo, `refs/heads/svc/${key}`)).toBeNull();
    // Nothing reached the remote: its only svc branch is the pull request's, unchanged.
    expect((await run('git', ['for-each-ref', '--format=%(refname) %(objectname)'], origin)).trim().split('\n').sort()).toEqual(
      [`refs/heads/main ${await refOf(h.repo, 'main')}`, `refs/heads/svc/${key} ${head}`].sort(),
    );
    expect(pushed).toEqual([]);
  });

  it('uncommitted files of a review agent are kept on the side branch too', async () => {
    const key = h.item('task', 'review me', { deliveries: [openDelivery({ ci: null })] });
    await commitOnRemoteOnly(origin, `svc/${key}`, 'feature.txt');
    const s = await runDispatch(h.opts({ command: 'review', keys: [key], agent: { agentCmd: 'sh -c "echo scribble > notes.txt; echo done"' } }), h.deps());
    expect(s.legs[0]).toMatchObject({ disposition: 'failed', reason: 'changed files during review' });
    const side = `svc/review/${key}/${s.runId}`;
    expect(await run('git', ['show', `${side}:notes.txt`], h.repo)).toBe('scribble\n');
  });

  it('a clean review succeeds; its final message is the result: summary, local log, event body', async () => {
    const key = h.item('task', 'review me', { deliveries: [openDelivery({ ci: 'passing' })] });
    await commitOnRemoteOnly(origin, `svc/${key}`, 'feature.txt');
    const stream = [
      { type: 'assistant', message: { content: [{ type: 'text', text: 'looking' }] } },
      { type: 'result', subtype: 'success', is_error: false, result: `Looks good. ${h.svc.token} Ship it.`, total_cost_usd: 0.01 },
    ]
      .map((o) => `echo '${JSON.stringify(o)}'`)
      .join('; ');
    const s = await runDispatch(
      h.opts({ command: 'review', keys: [key], sendLogs: true, agent: { agentCmd: `sh -c "${stream.replace(/"/g, '\\"')}"`, stream: 'claude-stream-json' } }),
      h.deps(),
    );
    expect(s).toMatchObject({ status: 'succeeded', exitCode: 0 });
    const review = s.legs[0]!.review!;
    expect(review).toMatch(/^Looks good\. .* Ship it\.$/);
    expect(review).not.toContain(h.svc.token);
    expect(readFileSync(`${runPaths(h.stateDir, s.runId!).logs}/${key}.review.md`, 'utf8')).toBe(`${review}\n`);
    expect(journalEvents(s.runId!).some((e) => e.body === `review of ${key}:\n${review}`)).toBe(true);
    // The review's worktree is gone and no side branch was made.
    expect(await refOf(h.repo, `refs/heads/svc/review/${key}/${s.runId}`)).toBeNull();
    expect((await run('git', ['worktree', 'list'], h.repo)).trim().split('\n')).toHaveLength(1);
  });
});

describe('fix', () => {
  it('works on a pull request head that exists only on the remote and pushes the fix there (fast-forward)', async () => {
    const key = h.item('task', 'fix me', { deliveries: [openDelivery()] });
    const head = await commitOnRemoteOnly(origin, `svc/${key}`, 'feature.txt');
    expect(await refOf(h.repo, `${head}^{commit}`)).toBeNull();
    const s = await runDispatch(
      h.opts({ command: 'fix', keys: [key], push: true, agent: { agentCmd: `sh -c "test -f feature.txt && ${COMMITTING_AGENT.slice(7, -1)}"` } }),
      h.deps({ pushBranch: pushToOrigin }),
    );
    expect(s.legs[0]).toMatchObject({ disposition: 'implemented', sessionBranch: `svc/${key}` });
    const local = await refOf(h.repo, `refs/heads/svc/${key}`);
    expect(await run('git', ['rev-parse', `${local}~1`], h.repo)).toBe(`${head}\n`);
    expect(await refOf(origin, `refs/heads/svc/${key}`)).toBe(local);
  });

  it('refuses to push a fix over a remote branch that moved on (no force)', async () => {
    const key = h.item('task', 'fix me', { deliveries: [openDelivery()] });
    await commitOnRemoteOnly(origin, `svc/${key}`, 'feature.txt');
    // Someone pushes to the pull request while the agent works: the remote branch moves elsewhere.
    const s = await runDispatch(
      h.opts({ command: 'fix', keys: [key], push: true }),
      h.deps({
        pushBranch: async (repo, branch) => {
          const other = await commitOnRemoteOnly(origin, 'elsewhere', 'other.txt');
          await run('git', ['update-ref', `refs/heads/${branch}`, other], origin);
          return pushToOrigin(repo, branch);
        },
      }),
    );
    expect(s.legs[0]).toMatchObject({ disposition: 'failed' });
    expect(s.legs[0]!.reason).toMatch(new RegExp(`^push failed: git push origin svc/${key}: .*rejected`));
    expect(await refOf(origin, `refs/heads/svc/${key}`)).toBe(await refOf(origin, 'refs/heads/elsewhere'));
  });

  it.each([true, false])('a local svc/KEY behind the head is fast-forwarded; one that diverged is refused (worktree: %s)', async (worktree) => {
    const key = h.item('task', 'fix me', { deliveries: [openDelivery()] });
    const head = await commitOnRemoteOnly(origin, `svc/${key}`, 'feature.txt');
    await run('git', ['branch', `svc/${key}`, 'main'], h.repo);
    const s = await runDispatch(
      h.opts({ command: 'fix', keys: [key], worktree, agent: { agentCmd: `sh -c "test -f feature.txt && ${COMMITTING_AGENT.slice(7, -1)}"` } }),
      h.deps(),
    );
    expect(s.legs[0]).toMatchObject({ disposition: 'implemented' });
    expect(await run('git', ['rev-parse', `svc/${key}~1`], h.repo)).toBe(`${head}\n`);
    if (!worktree) await run('git', ['checkout', '-q', 'main'], h.repo);

    const other = h.item('task', 'diverged', { deliveries: [openDelivery()] });
    await commitOnRemoteOnly(origin, `svc/${other}`, 'feature.txt');
    await run('git', ['branch', `svc/${other}`, 'main'], h.repo);
    await run('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.invalid', 'commit', '-q', '--allow-empty', '-m', 'mine'], h.repo);
    await run('git', ['branch', '-f', `svc/${other}`, 'HEAD'], h.repo);
    const mine = await refOf(h.repo, `refs/heads/svc/${other}`);
    const d = await runDispatch(h.opts({ command: 'fix', keys: [other], worktree }), h.deps());
    expect(d.legs[0]!.reason).toMatch(new RegExp(`^worktree: local svc/${other} and the pull request head \\(refs/heads/svc/${other}\\) have diverged`));
    expect(await refOf(h.repo, `refs/heads/svc/${other}`)).toBe(mine);
  });

  it('a repository without origin fails the leg with a one-line reason', async () => {
    const key = h.item('task', 'fix me', { deliveries: [openDelivery()] });
    await run('git', ['remote', 'remove', 'origin'], h.repo);
    const s = await runDispatch(h.opts({ command: 'fix', keys: [key] }), h.deps());
    expect(s.legs[0]!.reason).toBe(`worktree: cannot fetch the pull request head of ${key}: the repository has no 'origin' remote`);
  });
});

describe('--push on a local run', () => {
  it("pushes an implemented leg's branch to origin and tells onBranchPushed once", async () => {
    const key = h.item('task', 'push me');
    const pushed: BranchPushed[] = [];
    const s = await runDispatch(h.opts({ keys: [key], push: true }), h.deps({ pushBranch: pushToOrigin, onBranchPushed: async (p) => void pushed.push(p) }));
    expect(s.legs[0]).toMatchObject({ disposition: 'implemented' });
    expect(await refOf(origin, `refs/heads/svc/${key}`)).toBe(await refOf(h.repo, `refs/heads/svc/${key}`));
    expect(pushed).toEqual([{ runId: s.runId, key, branch: `svc/${key}`, repo: h.repo, mode: 'implement' }]);
  });

  it('without --push nothing leaves the machine', async () => {
    const key = h.item('task', 'keep me');
    const s = await runDispatch(h.opts({ keys: [key] }), h.deps({ pushBranch: pushToOrigin }));
    expect(s.legs[0]).toMatchObject({ disposition: 'implemented' });
    expect(await refOf(origin, `refs/heads/svc/${key}`)).toBeNull();
  });
});

// As root, svc's default is an agent user of its pool, whose clone of a review's detached
// worktree once failed every card (`Remote branch svc/review/KEY/run_… not found`) and left the
// worktree and the legs folder behind.
function ownerPid(root: string): number | null {
  try {
    return (JSON.parse(readFileSync(join(root, LEGS_OWNER_FILE), 'utf8')) as { pid: number }).pid;
  } catch {
    return null;
  }
}

describe.skipIf(process.getuid?.() !== 0)('review as root, through the agent boundary (the default pool)', () => {
  // The legs roots of this process (the engine runs in-process); other svc processes of the machine have their own.
  const legsRoots = () => readdirSync(tmpdir()).filter((d) => d.startsWith(LEGS_ROOT_PREFIX) && ownerPid(join(tmpdir(), d)) === process.pid);

  it('a clean review succeeds and leaves no worktree and no legs folder behind', async () => {
    const key = h.item('task', 'review me', { deliveries: [openDelivery({ ci: 'passing' })] });
    await commitOnRemoteOnly(origin, `svc/${key}`, 'feature.txt');
    const s = await runDispatch(
      h.opts({ command: 'review', keys: [key], agentUser: DEFAULT_POOL, agent: { agentCmd: 'sh -c "id -u; echo Looks good"' } }),
      h.deps(),
    );
    expect(s).toMatchObject({ status: 'succeeded', exitCode: 0 });
    expect(s.legs[0]).toMatchObject({ disposition: 'implemented', reason: null, review: expect.stringMatching(/Looks good$/) });
    expect(Number(s.legs[0]!.review!.split('\n')[0])).not.toBe(0);
    const worktrees = (await run('git', ['worktree', 'list', '--porcelain'], h.repo)).split('\n').filter((l) => l.startsWith('worktree '));
    expect(worktrees).toHaveLength(1);
    expect(legsRoots()).toEqual([]);
  });

  it('a review agent that changes files fails, its change kept on the side branch, its worktree gone', async () => {
    const key = h.item('task', 'review me', { deliveries: [openDelivery({ ci: null })] });
    await commitOnRemoteOnly(origin, `svc/${key}`, 'feature.txt');
    const s = await runDispatch(
      h.opts({ command: 'review', keys: [key], agentUser: DEFAULT_POOL, agent: { agentCmd: 'sh -c "echo scribble > notes.txt"' } }),
      h.deps(),
    );
    expect(s.legs[0]).toMatchObject({ disposition: 'failed', reason: 'changed files during review' });
    expect(await run('git', ['show', `svc/review/${key}/${s.runId}:notes.txt`], h.repo)).toBe('scribble\n');
  });
});
