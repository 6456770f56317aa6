// The one listing of a repository's git config a run's start reads (src/dispatch/git/config-list.ts):
// what git resolves, scope by scope, included files under their includer's scope; and the two
// questions answered from it as git's own `--get` and `--local` answer them.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { credentialsInGitConfig } from '../../../src/dispatch/git/config-credentials.js';
import { lastValue, readGitConfig } from '../../../src/dispatch/git/config-list.js';
import { agentIdentity, BOT_IDENTITY } from '../../../src/dispatch/git/identity.js';

/** A repository, and an environment whose global config is `global` (and no system config). */
function repoWith(global: string) {
  const dir = mkdtempSync(join(tmpdir(), 'svc-config-list-'));
  execFileSync('git', ['init', '-q', dir]);
  const file = join(dir, '..', `${dir.split('/').pop()}.gitconfig`);
  writeFileSync(file, global);
  const env = { ...process.env, GIT_CONFIG_GLOBAL: file, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_COUNT: '0' };
  const git = (...args: string[]) => execFileSync('git', ['-C', dir, ...args], { env });
  return { dir, env, git };
}

describe('the repository config listing', () => {
  it('holds every scope in order, an included file under its includer, values with newlines and equals signs', async () => {
    const { dir, env, git } = repoWith('[user]\n\tname = Global Name\n');
    const included = join(dir, '..', `${dir.split('/').pop()}.inc`);
    writeFileSync(included, '[http "https://example.test/"]\n\textraheader = AUTHORIZATION: basic x=y\n');
    git('config', 'include.path', included);
    git('config', 'user.name', 'Local Name');
    git('config', 'svc.multi', 'one\ntwo');
    const entries = (await readGitConfig(dir, env))!;
    expect(entries.filter((e) => e.key === 'user.name').map((e) => [e.scope, e.value])).toEqual([
      ['global', 'Global Name'],
      ['local', 'Local Name'],
    ]);
    expect(entries).toContainEqual({ scope: 'local', key: 'http.https://example.test/.extraheader', value: 'AUTHORIZATION: basic x=y' });
    expect(lastValue(entries, 'svc.multi')).toBe('one\ntwo');
    // As `git config --get` answers: the last value, a key in any case.
    expect(lastValue(entries, 'USER.NAME')).toBe(git('config', '--get', 'user.name').toString().trim());
    expect(lastValue(entries, 'user.email')).toBe('');
  });

  it('is null where git cannot read the config, and a run then gives the bot identity and warns of nothing', async () => {
    const { dir, env } = repoWith('[user\n\tname = broken');
    const listing = readGitConfig(dir, env);
    expect(await listing).toBeNull();
    expect(await agentIdentity(dir, undefined, env, listing)).toEqual(BOT_IDENTITY);
    expect(await credentialsInGitConfig(dir, listing)).toEqual([]);
  });
});

describe('answered from one listing', () => {
  it("the identity is git's own: none given where the user's config has both, the bot where the repository lacks an email", async () => {
    const both = repoWith('[user]\n\tname = Global Name\n\temail = global@example.test\n');
    expect(await agentIdentity(both.dir, undefined, both.env, readGitConfig(both.dir, both.env))).toBeNull();
    const nameOnly = repoWith('[user]\n\tname = Global Name\n');
    expect(await agentIdentity(nameOnly.dir, undefined, nameOnly.env, readGitConfig(nameOnly.dir, nameOnly.env))).toEqual(BOT_IDENTITY);
    // A value set only for this process (GIT_CONFIG_*) counts, as git's commit would see it.
    const env = { ...nameOnly.env, GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'user.email', GIT_CONFIG_VALUE_0: 'env@example.test' };
    expect(await agentIdentity(nameOnly.dir, undefined, env, readGitConfig(nameOnly.dir, env))).toBeNull();
  });

  it("credentials are the repository's own: a header in the user's global config is not one an agent's clone reads", async () => {
    const { dir, env, git } = repoWith('[http]\n\textraheader = AUTHORIZATION: basic global\n');
    expect(await credentialsInGitConfig(dir, readGitConfig(dir, env))).toEqual([]);
    git('config', 'remote.origin.url', 'https://user:token@example.test/repo.git');
    expect(await credentialsInGitConfig(dir, readGitConfig(dir, env))).toEqual(['remote.origin.url']);
  });
});
