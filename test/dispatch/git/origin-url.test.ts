// origin's URL is asked of git once per process and repository: a run's start needs it for the
// fence's git host and for selection's read of origin's branches, and a run with an open network
// does not ask for the git host at all (src/commands/dispatch/network-options.ts).
import { execFileSync } from 'node:child_process';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { networkFor } from '../../../src/commands/dispatch/network-options.js';
import { originUrl } from '../../../src/dispatch/git/run-git.js';
import { gitHost } from '../../../src/dispatch/fence/hosts.js';
import { makeRepo } from '../../support/cli.js';
import { testContext } from '../../support/context.js';
import { loggingGit, type GitLog } from '../../support/git-log.js';

const path = process.env.PATH;
let log: GitLog;
beforeEach(() => {
  log = loggingGit();
  process.env.PATH = `${log.bin}:${path}`;
});
afterEach(() => {
  process.env.PATH = path;
});
const asked = () => log.calls().filter((l) => l.includes('get-url')).length;

async function repoWithOrigin(url: string): Promise<string> {
  const repo = await makeRepo();
  execFileSync('git', ['-C', repo, 'remote', 'add', 'origin', url]);
  return repo;
}

test("the fence's git host and selection's question share one git process", async () => {
  const repo = await repoWithOrigin('https://git.example.com/team/app.git');
  expect(await gitHost(repo)).toBe('git.example.com:443');
  expect(await originUrl(repo)).toBe('https://git.example.com/team/app.git');
  expect(await gitHost(repo)).toBe('git.example.com:443');
  expect(asked()).toBe(1);
});

test('a repository without origin has none, and is asked once too', async () => {
  const repo = await makeRepo();
  expect(await originUrl(repo)).toBeNull();
  expect(await gitHost(repo)).toBeNull();
  expect(asked()).toBe(1);
});

test('an open run asks git nothing for the git host; a fenced one lists it', async () => {
  const input = { agent: { agent: 'claude' }, workflow: null, pool: null, uid: 1000, bwrap: async () => null };
  const open = await networkFor({ network: 'open' }, testContext(), { ...input, repo: await repoWithOrigin('https://git.example.com/a.git') });
  expect(open.network).toEqual({ mode: 'open', allow: [] });
  expect(asked()).toBe(0);
  const fenced = await networkFor({ network: 'fenced' }, testContext(), { ...input, repo: await repoWithOrigin('https://git.example.com/b.git') });
  expect(fenced.network.allow).toContain('git.example.com:443');
  expect(asked()).toBe(1);
});

test('a bad --allow-host is refused whatever the mode', async () => {
  const input = { agent: { agent: 'claude' }, workflow: null, pool: null, uid: 1000, bwrap: async () => null, repo: await makeRepo() };
  await expect(networkFor({ network: 'open', allowHost: ['bad host'] }, testContext(), input)).rejects.toThrow(/^--allow-host: /);
});
