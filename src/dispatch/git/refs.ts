// The commit a worktree has checked out, read from git's own files instead of a `git rev-parse`
// process: each card needs it twice (before and after its agent), and a process costs a fork of
// svc, which on a busy 2-core machine was a good part of the per-card overhead. Only the plain
// cases are read (a `.git` folder or file, HEAD a commit or a branch, a loose or packed branch);
// anything else (the reftable format, a symbolic branch, an unborn one) answers null, and the
// caller asks git.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';

const COMMIT = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;

function read(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

/** The git dir of the worktree at `dir` (its `.git` folder, or where its `.git` file points). */
function gitDirOf(dir: string): string | null {
  const dotGit = join(dir, '.git');
  try {
    if (statSync(dotGit).isDirectory()) return dotGit;
  } catch {
    return null;
  }
  const m = /^gitdir: (.+)$/m.exec(read(dotGit) ?? '');
  if (!m) return null;
  const target = m[1]!.trim();
  return isAbsolute(target) ? target : resolve(dir, target);
}

/** The commit branch `ref` (refs/heads/…) points to in the common git dir `common`, or null. */
function readBranch(common: string, ref: string): string | null {
  // A name git would not write (a hand-edited HEAD) is left to git.
  if (!ref.startsWith('refs/heads/') || ref.split('/').some((part) => part === '' || part === '.' || part === '..')) return null;
  // Under reftable, loose files are stubs that must not be believed.
  if (read(join(common, 'reftable', 'tables.list')) !== null) return null;
  const loose = read(join(common, ref));
  if (loose !== null) {
    const sha = loose.trim();
    return COMMIT.test(sha) ? sha : null;
  }
  // Packed: `<sha> <ref>` lines (`^<sha>` lines peel the tag before them).
  const packed = read(join(common, 'packed-refs'));
  if (packed === null) return null;
  for (const line of packed.split('\n')) {
    const space = line.indexOf(' ');
    if (space > 0 && line.slice(space + 1).trimEnd() === ref) {
      const sha = line.slice(0, space);
      return COMMIT.test(sha) ? sha : null;
    }
  }
  return null;
}

/** The common git dir of a worktree's git dir (itself, for a repository's own). */
function commonDirOf(gitDir: string): string {
  const common = read(join(gitDir, 'commondir'))?.trim();
  return common ? (isAbsolute(common) ? common : resolve(gitDir, common)) : gitDir;
}

/** The commit HEAD names in the worktree at `dir`, from git's files; null when they do not say. */
export function readHead(dir: string): string | null {
  const gitDir = gitDirOf(dir);
  if (!gitDir) return null;
  const head = read(join(gitDir, 'HEAD'))?.trim();
  if (!head) return null;
  if (COMMIT.test(head)) return head;
  if (!head.startsWith('ref: ')) return null;
  return readBranch(commonDirOf(gitDir), head.slice('ref: '.length).trim());
}

/** The parents of a loose commit object, or null (packed, not a commit, unreadable). */
function looseParents(objects: string, sha: string): string[] | null {
  let text: string;
  try {
    // node:zlib is loaded at the first leg that asks, not with the program (it is not small).
    const { inflateSync } = process.getBuiltinModule('node:zlib');
    text = inflateSync(readFileSync(join(objects, sha.slice(0, 2), sha.slice(2)))).toString('latin1');
  } catch {
    return null;
  }
  if (!text.startsWith('commit ')) return null;
  const header = text.slice(text.indexOf('\0') + 1).split('\n\n', 1)[0] ?? '';
  const parents = header
    .split('\n')
    .filter((line) => line.startsWith('parent '))
    .map((line) => line.slice('parent '.length));
  return parents.every((p) => COMMIT.test(p)) ? parents : null;
}

/**
 * How many commits HEAD has since `base` in the worktree at `dir`, from git's loose objects, as
 * `git rev-list --count base..HEAD` would say it: an agent's new commits are loose, so the "no
 * changes" rule needs no git process. Only a chain of single-parent commits back to `base` is
 * followed (`limit` of them); anything else (a merge, a packed object, grafts, replace refs, a
 * shallow clone) answers null, and the caller asks git.
 */
export function readCommitsSince(dir: string, base: string, limit = 32): number | null {
  const gitDir = gitDirOf(dir);
  const head = readHead(dir);
  if (!gitDir || !head) return null;
  if (head === base) return 0;
  const common = commonDirOf(gitDir);
  if (['shallow', 'info/grafts', 'refs/replace'].some((p) => existsSync(join(common, p)))) return null;
  if (read(join(common, 'packed-refs'))?.includes(' refs/replace/')) return null;
  const objects = join(common, 'objects');
  let at = head;
  for (let n = 1; n <= limit; n++) {
    const parents = looseParents(objects, at);
    if (parents?.length !== 1) return null;
    if (parents[0] === base) return n;
    at = parents[0]!;
  }
  return null;
}
