// What a run asks git as it starts, counted by a `git` on PATH that writes down each call
// (support/git-log.ts): each start-up question once (a fleet's 16 workers start together on 2 cores,
// and every git process is a fork of svc and a git start-up). The one rev-parse of the preflight
// answers the run's base and the repository's folders; whether there is an origin, the config
// listing says (no `git remote get-url` at all where it names origin's URL).
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { isolatedEnv, runCli } from '../../support/cli.js';
import { loggingGit } from '../../support/git-log.js';
import { copyRepoWithOrigin } from '../../support/git-remote.js';
import { startTestService, type TestService } from '../../support/service.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc.close());

test("a fleet worker's start asks git each question once", async () => {
  const { repo } = await copyRepoWithOrigin();
  const key = svc.admin.createWorkItem({ projectKey: svc.projectKey, kind: 'task', type: 'code', title: 'one card' }).key;
  const git = loggingGit();
  const env = isolatedEnv({ SVC_BASE_URL: svc.url, SVC_TOKEN: svc.token, SVC_PROJECT: svc.projectKey, PATH: `${git.bin}:${process.env.PATH}` });
  const agent = 'git -c user.name=agent -c user.email=agent@example.invalid commit -q --allow-empty -m done';
  const r = await runCli(['auto', '--per-run', '1', '--max', '1', '--push', '--repo', repo, '--agent-cmd', agent], { env });
  expect(r.code, r.stderr).toBe(0);
  expect(r.stderr).toContain(`${key}: pushed svc/${key}`);
  const calls = git.calls();
  expect(calls.filter((c) => c.includes('config --list'))).toHaveLength(1);
  expect(calls.filter((c) => c.includes('remote get-url'))).toEqual([]);
  expect(calls.filter((c) => c.startsWith('ls-remote --heads origin'))).not.toEqual([]);
  // The preflight's rev-parse, which prints the top folder and the common dir before HEAD's names.
  const folders = calls.filter((c) => /\brev-parse\b.*--(show-toplevel|git-common-dir)/.test(c));
  expect(folders).toEqual(['rev-parse --is-inside-work-tree --path-format=absolute --show-toplevel --git-common-dir HEAD --abbrev-ref HEAD']);
  // The worktree went where the common dir says (the workflow file was looked for at the top).
  expect(calls.some((c) => c.startsWith(`worktree add -b svc/${key} ${join(repo, '.git', 'svc-worktrees', key)} `))).toBe(true);
});

test('a remote the config does not name (the old .git/remotes file) is still asked of git, once', async () => {
  const { repo, origin } = await copyRepoWithOrigin();
  execFileSync('git', ['-C', repo, 'remote', 'remove', 'origin']);
  mkdirSync(join(repo, '.git', 'remotes'), { recursive: true });
  writeFileSync(join(repo, '.git', 'remotes', 'origin'), `URL: ${origin}\nPush: refs/heads/*:refs/heads/*\n`);
  svc.admin.createWorkItem({ projectKey: svc.projectKey, kind: 'task', type: 'code', title: 'one more card' });
  const git = loggingGit();
  const env = isolatedEnv({ SVC_BASE_URL: svc.url, SVC_TOKEN: svc.token, SVC_PROJECT: svc.projectKey, PATH: `${git.bin}:${process.env.PATH}` });
  const agent = 'git -c user.name=agent -c user.email=agent@example.invalid commit -q --allow-empty -m done';
  const r = await runCli(['auto', '--per-run', '1', '--max', '1', '--push', '--repo', repo, '--agent-cmd', agent], { env });
  expect(r.code, r.stderr).toBe(0);
  // The first test's card is not on this origin: either card may be the one picked.
  expect(r.stderr).toMatch(/PROJ-\d+: pushed svc\/PROJ-\d+/);
  const calls = git.calls();
  expect(calls.filter((c) => c.includes('remote get-url'))).toHaveLength(1);
  expect(calls.filter((c) => c.startsWith('ls-remote --heads origin'))).not.toEqual([]);
});
