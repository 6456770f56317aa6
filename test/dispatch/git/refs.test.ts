// readHead answers what `git rev-parse HEAD` answers wherever it answers at all, and null (ask git)
// where git's files do not say it plainly.
import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readCommitsSince, readHead } from '../../../src/dispatch/git/refs.js';
import { commit, git } from '../../support/git-commits.js';

let repo: string;

beforeEach(async () => {
  repo = await realpath(await mkdtemp(join(tmpdir(), 'svc-refs-')));
  git(repo, 'init', '-q', '-b', 'main');
  await commit(repo, 'a');
});
afterEach(async () => {
  await rm(repo, { recursive: true, force: true });
});

describe('readHead', () => {
  it('reads a branch checked out in the repository itself', () => {
    expect(readHead(repo)).toBe(git(repo, 'rev-parse', 'HEAD'));
  });

  it('reads a linked worktree, before and after a commit on its branch', async () => {
    const wt = join(repo, '.git', 'svc-worktrees', 'K-1');
    git(repo, 'worktree', 'add', '-q', '-b', 'svc/K-1', wt, 'HEAD');
    expect(readHead(wt)).toBe(git(repo, 'rev-parse', 'HEAD'));
    const made = await commit(wt, 'b');
    expect(readHead(wt)).toBe(made);
    // The repository's own HEAD did not move.
    expect(readHead(repo)).not.toBe(made);
  });

  it('reads a detached HEAD', async () => {
    const first = git(repo, 'rev-parse', 'HEAD');
    await commit(repo, 'b');
    git(repo, 'checkout', '-q', '--detach', first);
    expect(readHead(repo)).toBe(first);
  });

  it('reads a branch that lives only in packed-refs', async () => {
    const wt = join(repo, '.git', 'svc-worktrees', 'K-2');
    git(repo, 'worktree', 'add', '-q', '-b', 'svc/K-2', wt, 'HEAD');
    const made = await commit(wt, 'c');
    git(repo, 'pack-refs', '--all');
    expect(readHead(wt)).toBe(made);
    expect(readHead(repo)).toBe(git(repo, 'rev-parse', 'HEAD'));
  });

  it('is null where git would have to be asked: no repository, an unborn branch, a name git never writes', async () => {
    const empty = await realpath(await mkdtemp(join(tmpdir(), 'svc-refs-')));
    try {
      expect(readHead(empty)).toBeNull();
      git(empty, 'init', '-q', '-b', 'main');
      expect(readHead(empty)).toBeNull();
      await writeFile(join(empty, '.git', 'HEAD'), 'ref: refs/heads/../../config\n');
      expect(readHead(empty)).toBeNull();
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  });
});

describe('readCommitsSince', () => {
  const count = (dir: string, base: string) => Number(git(dir, 'rev-list', '--count', `${base}..HEAD`));

  it("counts an agent's plain commits in a card's worktree as rev-list does, none included", async () => {
    const base = git(repo, 'rev-parse', 'HEAD');
    const wt = join(repo, '.git', 'svc-worktrees', 'K-3');
    git(repo, 'worktree', 'add', '-q', '-b', 'svc/K-3', wt, 'HEAD');
    expect(readCommitsSince(wt, base)).toBe(0);
    await commit(wt, 'b');
    expect(readCommitsSince(wt, base)).toBe(count(wt, base));
    git(wt, 'commit', '-q', '--allow-empty', '-m', 'empty');
    await commit(wt, 'c');
    expect(readCommitsSince(wt, base)).toBe(3);
    expect(count(wt, base)).toBe(3);
  });

  it('is null where git must count: a merge, packed objects, a branch moved behind its base, replace refs, a shallow clone', async () => {
    const base = git(repo, 'rev-parse', 'HEAD');
    git(repo, 'checkout', '-q', '-b', 'side');
    await commit(repo, 'side.txt');
    git(repo, 'checkout', '-q', 'main');
    await commit(repo, 'main');
    git(repo, 'merge', '-q', '--no-edit', 'side');
    expect(readCommitsSince(repo, base)).toBeNull();
    git(repo, 'reset', '-q', '--hard', 'refs/heads/side');
    expect(readCommitsSince(repo, base)).toBe(1);
    git(repo, 'replace', 'HEAD', base);
    expect(readCommitsSince(repo, base)).toBeNull();
    git(repo, 'replace', '-d', 'HEAD');
    git(repo, 'gc', '-q');
    expect(readCommitsSince(repo, base)).toBeNull();
    await commit(repo, 'after-gc');
    // The new commit is loose, its parent is packed: the chain is not followed into the pack.
    expect(readCommitsSince(repo, base)).toBeNull();
    const ahead = git(repo, 'rev-parse', 'HEAD');
    git(repo, 'reset', '-q', '--hard', base);
    // HEAD behind where the count starts: rev-list says 0, and only git may say it.
    expect(readCommitsSince(repo, ahead)).toBeNull();
    const shallow = await realpath(await mkdtemp(join(tmpdir(), 'svc-refs-')));
    try {
      git(shallow, 'clone', '-q', '--depth', '1', `file://${repo}`, 'c');
      const clone = join(shallow, 'c');
      await commit(clone, 'd');
      expect(readCommitsSince(clone, base)).toBeNull();
    } finally {
      await rm(shallow, { recursive: true, force: true });
    }
  });
});
