// A global git configuration as some users have it: every commit signed (here by a signer that
// always fails, as one waiting for a passphrase would in an unattended run), hooks of the user's own
// that refuse every commit, checkout, merge and push, and another default branch. The suite's own git
// configuration is test/support/gitconfig; tests of how svc copes with a user's point here instead.
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const HOOKS = ['pre-commit', 'commit-msg', 'post-commit', 'post-checkout', 'post-merge', 'pre-push'];

/** Writes the configuration and its hooks into a new folder; returns the configuration's path. */
export function hostileGitConfig(): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-user-git-'));
  const hooks = join(dir, 'hooks');
  mkdirSync(hooks);
  for (const hook of HOOKS) {
    writeFileSync(join(hooks, hook), `#!/bin/sh\necho "the user's ${hook} hook refuses" >&2\nexit 1\n`);
    chmodSync(join(hooks, hook), 0o755);
  }
  const file = join(dir, 'gitconfig');
  writeFileSync(
    file,
    [
      '[user]',
      '\tname = A User',
      '\temail = user@example.invalid',
      '[commit]',
      '\tgpgSign = true',
      '[tag]',
      '\tgpgSign = true',
      '[gpg]',
      '\tprogram = false',
      '[init]',
      '\tdefaultBranch = trunk',
      '[core]',
      `\thooksPath = ${hooks}`,
      '',
    ].join('\n'),
  );
  return file;
}
