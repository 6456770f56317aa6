// readHead answers what `git rev-parse HEAD` answers wherever it answers at all, and null (ask git)
// where git's files do not say it plainly.
import { execFileSync } from 'node:child_process';
import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readHead } from '../../../src/dispatch/git/refs.js';

let repo: string;

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd, encoding: 'utf8' }).trim();
}

async function commit(cwd: string, name: string): Promise<string> {
  await writeFile(join(cwd, name), `${name}\n`);
  git(cwd, 'add', name);
  git(cwd, 'commit', '-q', '-m', name);
  return git(cwd, 'rev-parse', 'HEAD');
}

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
