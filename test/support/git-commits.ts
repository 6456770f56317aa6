// A repository's history made by hand, for the tests that read git's own files (refs.test.ts,
// objects.test.ts): git with a fixed identity, and a commit of one new file.
import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** git in `cwd`, its output trimmed; commits are by `t <t@t>`. */
export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd, encoding: 'utf8' }).trim();
}

/** Commits a new file `name` in `cwd`; returns the commit. */
export async function commit(cwd: string, name: string): Promise<string> {
  await writeFile(join(cwd, name), `${name}\n`);
  git(cwd, 'add', name);
  git(cwd, 'commit', '-q', '-m', name);
  return git(cwd, 'rev-parse', 'HEAD');
}
