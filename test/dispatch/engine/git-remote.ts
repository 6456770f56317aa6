// A bare repository as `origin` of a test repository: the remote pushes and fetches go to.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '../../support/cli.js';

export async function addBareOrigin(repo: string): Promise<string> {
  const bare = mkdtempSync(join(tmpdir(), 'svc-origin-'));
  await run('git', ['init', '-q', '--bare', bare]);
  await run('git', ['remote', 'add', 'origin', bare], repo);
  await run('git', ['push', '-q', 'origin', 'main'], repo);
  return bare;
}

/** The commit `ref` names in `dir`, or null. */
export async function refOf(dir: string, ref: string): Promise<string | null> {
  return run('git', ['rev-parse', '--verify', '-q', ref], dir).then((s) => s.trim(), () => null);
}

/**
 * Puts a commit on `branch` of the bare remote only (the pull request's head as another machine
 * pushed it), on top of the remote's main: made in a throwaway clone, so the test repository never sees it until it fetches.
 */
export async function commitOnRemoteOnly(bare: string, branch: string, file: string): Promise<string> {
  const clone = mkdtempSync(join(tmpdir(), 'svc-clone-'));
  await run('git', ['clone', '-q', '-b', 'main', bare, clone]);
  await run('git', ['checkout', '-q', '-b', branch], clone);
  await run('sh', ['-c', `echo remote > ${file}`], clone);
  await run('git', ['add', file], clone);
  await run('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.invalid', 'commit', '-q', '-m', `remote ${file}`], clone);
  await run('git', ['push', '-q', 'origin', branch], clone);
  return (await run('git', ['rev-parse', 'HEAD'], clone)).trim();
}
