// A hosted run reads `.svc/workflow.yml` of its checkout's base commit, as a local run does: the
// runner (`svc attach`, against `svc server --git-root`) clones the repository, runs the file's
// setup in the card's worktree, then its verify; a verify that fails fails the leg with
// `verify failed (exit N)` and the run ends failed.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRepository, repositoryPath } from '../../../src/server/git/index.js';
import { isolatedEnv, type CliEnv } from '../../support/cli.js';
import { svcInProcess } from '../../support/svc-in-process.js';
import { startLocalServer, type LocalServer } from '../../support/server-process.js';
import { git } from '../../support/hosted.js';

// setup leaves a mark in the worktree; verify exits 3 only when it finds it (1 otherwise), so the
// reason proves both steps ran, in that order, where the agent worked.
const WORKFLOW = ['setup: echo ready > .setup-ran', 'verify: test -f .setup-ran && exit 3', 'verify_attempts: 0', ''].join('\n');
const AGENT = `echo "work for $SVC_CARD_KEY" > "card-$SVC_CARD_KEY.txt"
git add "card-$SVC_CARD_KEY.txt" && git -c user.name=agent -c user.email=agent@example.invalid commit -qm "$SVC_CARD_KEY: done"
`;

let server: LocalServer;
let root: string;
let personal: CliEnv;

/** Commits `text` as `.svc/workflow.yml` on main of a new repository `name` of the git root. */
async function repositoryWithWorkflow(gitRoot: string, name: string, text: string): Promise<void> {
  const bare = await createRepository(gitRoot, name, { seedCommit: true });
  const seed = join(root, 'seed', name);
  await git(root, 'clone', '--quiet', bare, seed);
  mkdirSync(join(seed, '.svc'));
  writeFileSync(join(seed, '.svc', 'workflow.yml'), text);
  await git(seed, 'add', '.svc/workflow.yml');
  await git(seed, 'commit', '--quiet', '-m', 'the house workflow');
  await git(seed, 'push', '--quiet', 'origin', 'HEAD:main');
  expect(await git(bare, 'show', 'main:.svc/workflow.yml')).toBe(text.trim());
}

/** Opens a hosted run over a new card of `repository`, then runs its runner: `svc attach` in-process. */
async function hostedRunOf(repository: string, agent = AGENT) {
  const made = await fetch(`${server.url}/api/v1/projects/DEMO/work-items`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ kind: 'task', type: 'code', title: `Work in ${repository}`, targetRepositories: [repository] }),
  });
  const created = (await made.json()) as { key?: string; item?: { key: string } };
  const key = created.item?.key ?? created.key ?? '';
  const opened = await svcInProcess(['run', key, '--hosted', '--json'], { env: personal });
  expect(opened.code, opened.stderr).toBe(0);
  const runId = (JSON.parse(opened.stdout) as { run: { id: string } }).run.id;
  const runToken = (await svcInProcess(['server', 'run-token', runId, '--db', server.db], { env: isolatedEnv() })).stdout.trim();
  const workspace = join(root, 'work', runId);
  mkdirSync(workspace, { recursive: true });
  writeFileSync(join(root, 'agent.sh'), agent);
  const env = isolatedEnv({ SVC_BASE_URL: server.url, SVC_RUN_ID: runId, SVC_RUN_TOKEN: runToken });
  const r = await svcInProcess(['attach', '--agent-cmd', `sh ${join(root, 'agent.sh')}`, '--no-pr', '--json'], { env, cwd: workspace });
  const run = await fetch(`${server.url}/api/v1/dispatch-runs/${runId}`, { headers: { authorization: `Bearer ${server.token}` } }).then(
    (x) => x.json() as Promise<{ status: string; cards: Array<{ disposition: string }> }>,
  );
  return { key, r, run };
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'svc-hosted-workflow-'));
  const gitRoot = join(root, 'git-root');
  // The workflow is committed on main, the base every clone starts from.
  await repositoryWithWorkflow(gitRoot, 'acme/checked', WORKFLOW);
  await repositoryWithWorkflow(gitRoot, 'acme/broken', 'ports: two\n');
  await repositoryWithWorkflow(gitRoot, 'acme/best', 'verify: test "$(cat attempt.txt)" = 2\nattempts: 2\n');
  server = await startLocalServer(['--git-root', gitRoot]);
  personal = isolatedEnv({ SVC_BASE_URL: server.url, SVC_TOKEN: server.token, SVC_PROJECT: 'DEMO' });
}, 60_000);

afterAll(async () => {
  const violations = await server?.stop();
  expect(violations).toEqual([]);
});

describe('a hosted run and .svc/workflow.yml', () => {
  it("runs the base commit's setup and verify; a failing verify fails the leg and the run", async () => {
    const { key, r, run } = await hostedRunOf('acme/checked');
    expect(r.code, r.stderr).toBe(1);
    const summary = JSON.parse(r.stdout) as { status: string; legs: Array<{ key: string; disposition: string; reason: string }> };
    expect(summary.legs).toEqual([expect.objectContaining({ key, disposition: 'failed', reason: 'verify failed (exit 3)' })]);
    expect(summary.status).toBe('failed');

    expect(run.status).toBe('failed');
    expect(run.cards[0]).toMatchObject({ disposition: 'failed' });
    // Nothing was pushed for a leg that failed its check.
    expect(await git(repositoryPath(join(root, 'git-root'), 'acme/checked'), 'branch', '--list', `svc/${key}`)).toBe('');
  });

  it('a workflow with a mistake is one line and exit 2 before any leg starts', async () => {
    const { r, run } = await hostedRunOf('acme/broken');
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('svc: .svc/workflow.yml (HEAD):1: ports must be a whole number from 1 to 100, not "two"\n');
    expect(r.stdout).toBe('');
    // No leg started: the card is still queued, the run open for its runner's end to close.
    expect(run).toMatchObject({ status: 'running', cards: [{ disposition: 'queued' }] });
  });

  it("runs the workflow's attempts: the one that passes the check is pushed as svc/KEY, the other not at all", async () => {
    const agent = `echo "$SVC_ATTEMPT" > attempt.txt
git add attempt.txt && git -c user.name=agent -c user.email=agent@example.invalid commit -qm "$SVC_CARD_KEY: attempt $SVC_ATTEMPT"
`;
    const { key, r, run } = await hostedRunOf('acme/best', agent);
    expect(r.code, r.stderr).toBe(0);
    const leg = (JSON.parse(r.stdout) as { legs: Array<{ disposition: string; bestOf?: { winner: number | null } }> }).legs[0];
    expect(leg).toMatchObject({ disposition: 'implemented', bestOf: { winner: 2 } });
    expect(run.cards[0]).toMatchObject({ disposition: 'implemented' });
    const bare = repositoryPath(join(root, 'git-root'), 'acme/best');
    expect(await git(bare, 'show', `svc/${key}:attempt.txt`)).toBe('2');
    expect(await git(bare, 'branch', '--list', `svc/${key}-attempt-*`)).toBe('');
  });
});
