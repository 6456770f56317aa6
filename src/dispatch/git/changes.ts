// What a leg changed, asked after its agent: the paths it touched among the protected ones, and its
// commits. Each is asked on every card, so git's files answer where they can (./refs.ts) and a git
// process is started only where one could find something.
import { lstatSync } from 'node:fs';
import { join } from 'node:path';
import { readCommitsSince, readHead } from './refs.js';
import { gitRun } from './run-git.js';

/**
 * The paths of `globs` (git's glob pathspecs, from the repository's root) that differ at `path`
 * from `base`: committed, uncommitted or new (untracked and not ignored). Sorted, each once.
 * Committed means in HEAD's tree, whatever the working tree says: a change committed and then put
 * back only in the files is what the branch (and a push) would carry.
 */
export async function changedPathsOf(path: string, base: string, globs: readonly string[]): Promise<string[]> {
  const specs = globs.map((g) => `:(top,glob)${g}`);
  const diff = (...against: string[]) => gitRun(path, ['diff', '--no-ext-diff', '--no-renames', '--name-only', '-z', ...against, '--', ...specs]);
  const [files, committed, added] = await Promise.all([
    diff(base),
    // HEAD read from git's files: a leg with no commit needs no second diff.
    readHead(path) === base ? '' : diff(base, 'HEAD'),
    globs.some((g) => mayHoldFiles(path, g)) ? gitRun(path, ['ls-files', '-z', '--others', '--exclude-standard', '--', ...specs]) : '',
  ]);
  return [...new Set(`${files}${committed}${added}`.split('\0').filter(Boolean))].sort();
}

/**
 * Whether a file matching git's glob pathspec `glob` can exist in the tree at `root`: false only
 * when the glob's leading folders (those before its first wildcard), or the whole path when it has
 * none, are not there. The protected paths are few and usually absent (`.svc/workflow.yml` in a
 * repository without a workflow), and a new file under one needs git's list of untracked files,
 * a process per leg, only where one could be.
 */
function mayHoldFiles(root: string, glob: string): boolean {
  const parts = glob.split('/');
  const wild = parts.findIndex((p) => /[*?[\\]/.test(p));
  const fixed = parts.slice(0, wild === -1 ? parts.length : wild).filter(Boolean);
  if (fixed.length === 0) return true;
  try {
    return lstatSync(join(root, ...fixed), { throwIfNoEntry: false }) !== undefined;
  } catch {
    // Not a folder on the way, or not readable: git is asked.
    return true;
  }
}

/** Commits on HEAD since `headBefore`: zero means the agent left no change. */
export async function commitsSince(path: string, headBefore: string): Promise<number> {
  // An agent that left HEAD where it was, or put plain commits on it, is answered from git's files.
  const read = readCommitsSince(path, headBefore);
  if (read !== null) return read;
  const out = (await gitRun(path, ['rev-list', '--count', `${headBefore}..HEAD`])).trim();
  return Number.parseInt(out, 10) || 0;
}
