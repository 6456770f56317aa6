// svc's own commits (the demo's repository, a review agent's leftover files) are svc's, made
// unattended: a user's global git configuration that signs every commit or runs hooks of its own
// must not stop them. The suite otherwise runs on its own neutral configuration (test/support/gitconfig).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, expect, test } from 'vitest';
import { isolatedEnv, run, runCli } from '../support/cli.js';
import { hostileGitConfig } from '../support/hostile-git.js';

let config: string;
beforeAll(() => {
  config = hostileGitConfig();
});

test('the configuration is as hostile as meant: a plain git commit under it fails', async () => {
  const repo = mkdtempSync(join(tmpdir(), 'svc-hostile-repo-'));
  const env = { ...process.env, GIT_CONFIG_GLOBAL: config };
  await run('git', ['init', '-q'], repo, env);
  writeFileSync(join(repo, 'a.txt'), 'a\n');
  await run('git', ['add', 'a.txt'], repo, env);
  await expect(run('git', ['commit', '-q', '-m', 'a'], repo, env)).rejects.toThrow();
  await expect(run('git', ['commit', '-q', '--no-verify', '-m', 'a'], repo, env)).rejects.toThrow(/gpg|sign/i);
  expect((await run('git', ['symbolic-ref', '--short', 'HEAD'], repo, env)).trim()).toBe('trunk');
});

test('svc demo completes under it: its repository and its agent commit neither signed nor hooked', async () => {
  const r = await runCli(['demo'], { env: isolatedEnv({ GIT_CONFIG_GLOBAL: config }) });
  expect(r.code, r.stderr).toBe(0);
  expect(`${r.stdout}${r.stderr}`).toMatch(/The service recorded run run_\w+: succeeded, completed/);
});
