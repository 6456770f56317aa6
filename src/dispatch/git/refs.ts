// The commit a worktree has checked out, read from git's own files instead of a `git rev-parse`
// process: each card needs it twice (before and after its agent), and a process costs a fork of
// svc, which on a busy 2-core machine was a good part of the per-card overhead. Only the plain
// cases are read (a `.git` folder or file, HEAD a commit or a branch, a loose or packed branch);
// anything else (the reftable format, a symbolic branch, an unborn one) answers null, and the
// caller asks git.
import { readFileSync, statSync } from 'node:fs';
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

/** The commit HEAD names in the worktree at `dir`, from git's files; null when they do not say. */
export function readHead(dir: string): string | null {
  const gitDir = gitDirOf(dir);
  if (!gitDir) return null;
  const head = read(join(gitDir, 'HEAD'))?.trim();
  if (!head) return null;
  if (COMMIT.test(head)) return head;
  if (!head.startsWith('ref: ')) return null;
  const common = read(join(gitDir, 'commondir'))?.trim();
  const commonDir = common ? (isAbsolute(common) ? common : resolve(gitDir, common)) : gitDir;
  return readBranch(commonDir, head.slice('ref: '.length).trim());
}
