// Worktrees against real repositories in temp dirs.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WorktreeError } from '../../../src/dispatch/git/run-git.js';
import { checkoutInPlace, defaultWorktreeRoot, isDirty, prepareWorktree, pruneWorktrees } from '../../../src/dispatch/git/worktree.js';
import { commitsSince } from '../../../src/dispatch/git/changes.js';
import { copyRepo } from '../../support/repo-template.js';

let repo: string;

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd, encoding: 'utf8' }).trim();
}

// One repository with README.md committed on main, built once and copied per test (without git's
// sample hooks, which made up half the files of each copy: test/support/cli.ts).
async function buildRepo(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-wt-'));
  git(dir, 'init', '-q', '--template=', '-b', 'main');
  await writeFile(join(dir, 'README.md'), 'hello\n');
  git(dir, 'add', 'README.md');
  git(dir, 'commit', '-q', '-m', 'root');
  return dir;
}

beforeEach(async () => {
  repo = await realpath(await copyRepo('readme', buildRepo));
});
afterEach(async () => {
  await rm(repo, { recursive: true, force: true });
});

describe('prepareWorktree', () => {
  it('creates svc/<KEY> from HEAD under <git dir>/svc-worktrees', async () => {
    const wt = await prepareWorktree({ repo, key: 'SVC-1' });
    expect(wt).toEqual({
      path: join(repo, '.git', 'svc-worktrees', 'SVC-1'),
      branch: 'svc/SVC-1',
      created: true,
      headBefore: git(repo, 'rev-parse', 'HEAD'),
    });
    expect(git(wt.path, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe('svc/SVC-1');
    expect(await defaultWorktreeRoot(repo)).toBe(join(repo, '.git', 'svc-worktrees'));
    // The main checkout does not see the worktree folder.
    expect(await isDirty(repo)).toBe(false);
  });

  it('creates 8 worktrees in parallel without a lock race', async () => {
    // Three rounds: an unserialized `git worktree add` loses the race often, not always.
    for (const round of [100, 200, 300]) {
      const keys = Array.from({ length: 8 }, (_, i) => `SVC-${round + i}`);
      const all = await Promise.all(keys.map((key) => prepareWorktree({ repo, key })));
      expect(all.map((w) => w.branch)).toEqual(keys.map((k) => `svc/${k}`));
      expect(all.every((w) => w.created && existsSync(w.path))).toBe(true);
      const listed = git(repo, 'worktree', 'list', '--porcelain');
      for (const key of keys) expect(listed).toContain(`branch refs/heads/svc/${key}`);
    }
  });

  it('reuses an existing branch with its commits intact, never resetting it', async () => {
    git(repo, 'branch', 'svc/SVC-2');
    git(repo, 'checkout', '-q', 'svc/SVC-2');
    await writeFile(join(repo, 'work.txt'), 'earlier work\n');
    git(repo, 'add', 'work.txt');
    git(repo, 'commit', '-q', '-m', 'SVC-2: earlier work');
    const tip = git(repo, 'rev-parse', 'HEAD');
    git(repo, 'checkout', '-q', 'main');

    const wt = await prepareWorktree({ repo, key: 'SVC-2', baseRef: 'main' });
    expect(wt.created).toBe(true);
    expect(wt.headBefore).toBe(tip);
    expect(existsSync(join(wt.path, 'work.txt'))).toBe(true);
    expect(git(repo, 'rev-parse', 'svc/SVC-2')).toBe(tip);
  });

  it('reuses the existing worktree of the branch, uncommitted work included', async () => {
    const first = await prepareWorktree({ repo, key: 'SVC-3' });
    await writeFile(join(first.path, 'wip.txt'), 'not committed yet\n');
    const again = await prepareWorktree({ repo, key: 'SVC-3' });
    expect(again).toEqual({ ...first, created: false });
    expect(existsSync(join(again.path, 'wip.txt'))).toBe(true);
  });

  it('recreates a worktree whose folder was deleted by hand, keeping the branch', async () => {
    const first = await prepareWorktree({ repo, key: 'SVC-4' });
    await writeFile(join(first.path, 'a.txt'), 'a\n');
    git(first.path, 'add', 'a.txt');
    git(first.path, 'commit', '-q', '-m', 'SVC-4: a');
    const tip = git(first.path, 'rev-parse', 'HEAD');
    await rm(first.path, { recursive: true, force: true });
    const again = await prepareWorktree({ repo, key: 'SVC-4' });
    expect(again.created).toBe(true);
    expect(again.headBefore).toBe(tip);
  });

  it('starts a new branch from baseRef and honours a custom root', async () => {
    const base = git(repo, 'rev-parse', 'HEAD');
    await writeFile(join(repo, 'later.txt'), 'x\n');
    git(repo, 'add', 'later.txt');
    git(repo, 'commit', '-q', '-m', 'later');
    const root = join(repo, '.git', 'elsewhere');
    const wt = await prepareWorktree({ repo, key: 'SVC-5', baseRef: base, root });
    expect(wt.path).toBe(join(root, 'SVC-5'));
    expect(wt.headBefore).toBe(base);
  });

  it('refuses a baseRef that names no commit, leaving no branch and no worktree behind', async () => {
    await expect(prepareWorktree({ repo, key: 'SVC-9', baseRef: 'no-such-ref' })).rejects.toThrow(
      new WorktreeError(`cannot start svc/SVC-9: 'no-such-ref' names no commit in ${repo}`),
    );
    expect(git(repo, 'branch', '--list', 'svc/SVC-9')).toBe('');
    expect(existsSync(join(repo, '.git', 'svc-worktrees', 'SVC-9'))).toBe(false);
  });
});

describe('commitsSince and isDirty', () => {
  it('counts the commits an agent left and sees uncommitted files', async () => {
    const wt = await prepareWorktree({ repo, key: 'SVC-6' });
    expect(await commitsSince(wt.path, wt.headBefore)).toBe(0);
    expect(await isDirty(wt.path)).toBe(false);
    await writeFile(join(wt.path, 'new.txt'), 'n\n');
    expect(await isDirty(wt.path)).toBe(true);
    git(wt.path, 'add', 'new.txt');
    git(wt.path, 'commit', '-q', '-m', 'SVC-6: one');
    git(wt.path, 'commit', '-q', '--allow-empty', '-m', 'SVC-6: two');
    expect(await commitsSince(wt.path, wt.headBefore)).toBe(2);
    expect(await isDirty(wt.path)).toBe(false);
  });
});

describe('pruneWorktrees', () => {
  it('removes clean worktrees, never a dirty one, and keeps every branch', async () => {
    const clean = await prepareWorktree({ repo, key: 'SVC-7' });
    const dirty = await prepareWorktree({ repo, key: 'SVC-8' });
    await writeFile(join(dirty.path, 'unsaved.txt'), 'precious\n');
    const result = await pruneWorktrees({ repo });
    expect(result.removed).toEqual([{ key: 'SVC-7', path: clean.path }]);
    expect(result.kept).toEqual([{ key: 'SVC-8', path: dirty.path, reason: 'uncommitted changes' }]);
    expect(existsSync(clean.path)).toBe(false);
    expect(existsSync(join(dirty.path, 'unsaved.txt'))).toBe(true);
    expect(git(repo, 'branch', '--list', 'svc/*')).toContain('svc/SVC-7');
  });

  it('only touches the finished keys when given', async () => {
    const a = await prepareWorktree({ repo, key: 'SVC-20' });
    const b = await prepareWorktree({ repo, key: 'SVC-21' });
    const result = await pruneWorktrees({ repo, finishedKeys: ['SVC-21'] });
    expect(result.removed).toEqual([{ key: 'SVC-21', path: b.path }]);
    expect(existsSync(a.path)).toBe(true);
  });

  it("keeps a live run's card's attempt worktrees as it keeps the card's", async () => {
    const card = await prepareWorktree({ repo, key: 'SVC-40' });
    const attempt = await prepareWorktree({ repo, key: 'SVC-40-attempt-2' });
    const other = await prepareWorktree({ repo, key: 'SVC-41-attempt-1' });
    const result = await pruneWorktrees({ repo, inUse: new Map([['SVC-40', 'in use by live run r1']]) });
    expect(result.kept).toEqual([
      { key: 'SVC-40', path: card.path, reason: 'in use by live run r1' },
      { key: 'SVC-40-attempt-2', path: attempt.path, reason: 'in use by live run r1' },
    ]);
    expect(result.removed).toEqual([{ key: 'SVC-41-attempt-1', path: other.path }]);
  });

  it('keeps a locked worktree', async () => {
    const wt = await prepareWorktree({ repo, key: 'SVC-22' });
    git(repo, 'worktree', 'lock', wt.path);
    const result = await pruneWorktrees({ repo });
    expect(result.kept).toEqual([{ key: 'SVC-22', path: wt.path, reason: 'locked' }]);
  });
});

describe('checkoutInPlace (--no-worktree)', () => {
  it('checks out svc/<KEY> in the repository', async () => {
    const result = await checkoutInPlace({ repo, key: 'SVC-30' });
    expect(result).toMatchObject({ path: repo, branch: 'svc/SVC-30', created: true });
    expect(git(repo, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe('svc/SVC-30');
    // Idempotent: already on the branch.
    expect((await checkoutInPlace({ repo, key: 'SVC-30' })).created).toBe(false);
  });

  it('refuses a dirty tree with a clear error and leaves it alone', async () => {
    await writeFile(join(repo, 'README.md'), 'edited\n');
    await expect(checkoutInPlace({ repo, key: 'SVC-31' })).rejects.toThrow(WorktreeError);
    await expect(checkoutInPlace({ repo, key: 'SVC-31' })).rejects.toThrow(/uncommitted changes/);
    expect(git(repo, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe('main');
  });
});
