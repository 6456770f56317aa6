// A hosted run writes its pull request, end to end: `svc server` serves the API and the git remote,
// `svc attach` (run credential only) clones, lets a fake agent commit, pushes through the credential
// helper and opens the pull request on the local GitHub stand-in with the installation token of
// getGitCredential; a second hosted run over the same card updates it. The first attach is the real built
// bin/svc.js in a process of its own, as a runner starts it; the other svc commands (opening the
// runs, minting their credentials, the second attach) run in-process through the same command tree.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRepository } from '../../../src/server/git/index.js';
import { isolatedEnv, runCli, type CliEnv } from '../../support/cli.js';
import { startLocalServer, type LocalServer } from '../../support/server-process.js';
import { svcInProcess } from '../../support/svc-in-process.js';
import { startGitHubMock, type GitHubMock } from './github-mock.js';

const AGENT = `#!/bin/sh
echo "work $SVC_RUN_ID" >> "card-$SVC_CARD_KEY.txt"
git add -A && git -c user.name=agent -c user.email=agent@example.invalid commit -qm "$SVC_CARD_KEY: done"
echo "Added the widget. Tested with $SVC_RUN_TOKEN."
`;

let server: LocalServer;
let gh: GitHubMock;
let root: string;
let personal: CliEnv;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'svc-hosted-pr-'));
  const gitRoot = join(root, 'git-root');
  await createRepository(gitRoot, 'acme/widgets', { seedCommit: true });
  server = await startLocalServer(['--git-root', gitRoot]);
  gh = await startGitHubMock({ token: /ghs_[A-Za-z0-9]{16,}/ });
  personal = isolatedEnv({ SVC_BASE_URL: server.url, SVC_TOKEN: server.token, SVC_PROJECT: 'DEMO' });
}, 60_000);

afterAll(async () => {
  await gh?.close();
  const violations = await server?.stop();
  expect(violations).toEqual([]);
});

async function hostedRun(key: string, attach: 'spawned' | 'in-process', extra: string[] = []) {
  const opened = await svcInProcess(['run', key, '--hosted', '--json'], { env: personal });
  expect(opened.code, opened.stderr).toBe(0);
  const runId = (JSON.parse(opened.stdout) as { run: { id: string } }).run.id;
  const minted = await svcInProcess(['server', 'run-token', runId, '--db', server.db], { env: isolatedEnv() });
  const runToken = minted.stdout.trim();
  // One workspace for both runs: the second finds the clone and svc/KEY as the first left them, so
  // its push is a fast-forward (a fresh clone would start svc/KEY again from main).
  const workspace = join(root, 'work');
  mkdirSync(workspace, { recursive: true });
  const agent = join(root, 'agent.sh');
  writeFileSync(agent, AGENT, { mode: 0o755 });
  const env = isolatedEnv({ SVC_BASE_URL: server.url, SVC_RUN_ID: runId, SVC_RUN_TOKEN: runToken, SVC_GITHUB_API_URL: gh.url, SVC_MAX_WAIT: '5s' });
  const args = ['attach', '--agent-cmd', `sh ${agent}`, '--json', ...extra];
  // Spawned once: that the bundle in dist/ starts and carries a hosted run through is only seen
  // from a process of its own.
  const r = attach === 'spawned' ? await runCli(args, { env, cwd: workspace, timeoutMs: 120_000 }) : await svcInProcess(args, { env, cwd: workspace });
  return { r, runId, runToken };
}

describe('hosted runs open pull requests by default', () => {
  it('opens with the installation token, updates on the next run, and no token reaches GitHub in a body', async () => {
    const made = await fetch(`${server.url}/api/v1/projects/DEMO/work-items`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ kind: 'task', type: 'code', title: 'Add a widget', targetRepositories: ['acme/widgets'] }),
    });
    const created = (await made.json()) as { key?: string; item?: { key: string } };
    const key = created.item?.key ?? created.key ?? '';
    expect(key).toMatch(/^DEMO-\d+$/);

    const one = await hostedRun(key, 'spawned', ['--draft']);
    expect(one.r.code, one.r.stderr).toBe(0);
    const s1 = JSON.parse(one.r.stdout) as { legs: Array<{ disposition: string; pullRequest: { action: string; url: string } }> };
    expect(s1.legs[0]).toMatchObject({ disposition: 'implemented', pullRequest: { action: 'opened', url: 'https://github.example.test/acme/widgets/pull/1' } });
    expect(one.r.stderr).toContain(`${key}: pull request opened: https://github.example.test/acme/widgets/pull/1`);

    const two = await hostedRun(key, 'in-process');
    expect(two.r.code, two.r.stderr).toBe(0);
    expect(JSON.parse(two.r.stdout).legs[0]).toMatchObject({ pullRequest: { action: 'updated', url: 'https://github.example.test/acme/widgets/pull/1' } });

    expect(gh.pulls('acme/widgets')).toHaveLength(1);
    const pr = gh.pulls('acme/widgets')[0]!;
    expect(pr).toMatchObject({ head: `svc/${key}`, base: 'main', title: `${key}: Add a widget`, draft: true });
    expect(pr.body).toContain(two.runId);
    expect(pr.body).toContain('Added the widget. Tested with');
    // Every call carried an installation token of the run; none of them, nor the run credential, is in a body.
    const tokens = [...new Set(gh.requests.map((q) => q.authorization?.replace(/^token /, '') ?? ''))];
    expect(tokens.length).toBeGreaterThan(0);
    for (const t of tokens) expect(t).toMatch(/^ghs_/);
    const bodies = gh.requests.map((q) => q.rawBody).join('\n');
    for (const secret of [...tokens, one.runToken, two.runToken]) {
      expect(bodies).not.toContain(secret);
      expect(one.r.stdout + one.r.stderr + two.r.stdout + two.r.stderr).not.toContain(secret);
    }
  });

  it('a GitHub API URL that answers no TLS (plain HTTP behind https://) is said as a TLS failure naming it, and the leg stays implemented', async () => {
    const made = await fetch(`${server.url}/api/v1/projects/DEMO/work-items`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ kind: 'task', type: 'code', title: 'Behind a wrong URL', targetRepositories: ['acme/widgets'] }),
    });
    const created = (await made.json()) as { key?: string; item?: { key: string } };
    const key = created.item?.key ?? created.key ?? '';
    const https = gh.url.replace(/^http:/, 'https:');
    const before = gh.requests.length;
    const { r } = await hostedRun(key, 'in-process', ['--github-api-url', https]);
    expect(JSON.parse(r.stdout).legs[0]).toMatchObject({ disposition: 'implemented' });
    expect(r.stderr).toContain(`${key}: pull request: cannot reach ${https}/repos/acme/widgets/pulls: TLS: wrong version number\n`);
    expect(r.stderr).not.toContain('GitHub 500');
    expect(gh.requests.length).toBe(before);
  });
});
