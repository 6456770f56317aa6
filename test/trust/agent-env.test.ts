// The agent's environment is an allowlist (docs/agents.md): svc is started with the
// CI variables of GitHub Actions, GitLab, Buildkite, CircleCI and Jenkins and the usual registry
// and cloud credentials, and a real leg's agent dumps its environment, as root through the default
// pool and with `--agent-user none`. None of them reaches it; a name given with `--agent-env` or the
// workflow's `env:` does, and so does a preset's own key (a stand-in `claude`).
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isolatedEnv, makeRepo, run, type CliEnv } from '../support/cli.js';
import { startLocalServer, type LocalServer } from '../support/server-process.js';
import { svcInProcess } from '../support/svc-in-process.js';

const isRoot = process.getuid?.() === 0;

/** What a CI job's environment holds besides the basics: none of it is the agent's. */
const CI_CREDENTIALS = [
  // GitHub Actions
  'GITHUB_TOKEN',
  'GH_TOKEN',
  'ACTIONS_RUNTIME_TOKEN',
  'ACTIONS_ID_TOKEN_REQUEST_TOKEN',
  'ACTIONS_ID_TOKEN_REQUEST_URL',
  'ACTIONS_CACHE_URL',
  // GitLab CI
  'CI_JOB_TOKEN',
  'CI_JOB_JWT',
  'CI_JOB_JWT_V2',
  'CI_REPOSITORY_URL',
  'CI_REGISTRY_PASSWORD',
  'CI_DEPENDENCY_PROXY_PASSWORD',
  'GITLAB_TOKEN',
  // Buildkite
  'BUILDKITE_AGENT_ACCESS_TOKEN',
  'BUILDKITE_API_TOKEN',
  // CircleCI
  'CIRCLE_TOKEN',
  'CIRCLE_OIDC_TOKEN',
  'CIRCLE_OIDC_TOKEN_V2',
  // Jenkins
  'JENKINS_SECRET',
  'JENKINS_API_TOKEN',
  // Registries and clouds
  'NPM_TOKEN',
  'NODE_AUTH_TOKEN',
  'DOCKER_PASSWORD',
  'DOCKER_AUTH_CONFIG',
  'DOCKERHUB_TOKEN',
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
  'GOOGLE_APPLICATION_CREDENTIALS',
  'GOOGLE_OAUTH_ACCESS_TOKEN',
  'AZURE_CLIENT_ID',
  'AZURE_CLIENT_SECRET',
  'AZURE_TENANT_ID',
  'ARM_CLIENT_SECRET',
  'TWINE_PASSWORD',
  'CARGO_REGISTRY_TOKEN',
  'VAULT_TOKEN',
  'KUBECONFIG',
  // Another preset's key, and a name nobody could list in advance
  'OPENAI_API_KEY',
  'FOO_SECRET',
];
const value = (name: string) => `leaked-value-of-${name.toLowerCase()}`;
const ciEnv = Object.fromEntries(CI_CREDENTIALS.map((n) => [n, value(n)]));
// A proxy with a password is a credential too; the ones the job set as flags are not.
Object.assign(ciEnv, { HTTPS_PROXY: 'http://proxyuser:proxy-password-1@proxy.invalid:3128', GITHUB_ACTIONS: 'true', GITLAB_CI: 'true' });

let server: LocalServer;
/** 0755: the pool's uid must be able to read the agent's scripts. */
let open: string;
let bin: string;

beforeAll(async () => {
  server = await startLocalServer();
  open = mkdtempSync(join(tmpdir(), 'svc-agent-env-'));
  chmodSync(open, 0o755);
  writeFileSync(join(open, 'dump.sh'), '#!/bin/sh\necho "--- env of $SVC_CARD_KEY ---"\nenv\n', { mode: 0o755 });
  bin = join(open, 'bin');
  mkdirSync(bin, { mode: 0o755 });
  // A stand-in for Claude Code: the preset's command line, its environment dumped.
  writeFileSync(join(bin, 'claude'), '#!/bin/sh\ncat > /dev/null\nenv\n', { mode: 0o755 });
}, 60_000);

afterAll(async () => {
  await server?.stop();
});

function envFor(agentUser: string | undefined, extra: CliEnv = {}): CliEnv {
  return isolatedEnv({
    SVC_BASE_URL: server.url,
    SVC_TOKEN: server.token,
    SVC_PROJECT: 'DEMO',
    SVC_AGENT_USER: agentUser,
    ...ciEnv,
    ...extra,
  });
}

async function card(env: CliEnv, title: string): Promise<string> {
  const made = await svcInProcess(['items', 'create', '--kind', 'task', '--title', title, '--json'], { env });
  expect(made.code, made.stderr).toBe(0);
  return (JSON.parse(made.stdout) as { key: string }).key;
}

/** Runs one card and returns its leg's log (what the agent printed). */
async function legLog(env: CliEnv, args: string[], repo: string): Promise<string> {
  const key = await card(env, 'dump the environment');
  const r = await svcInProcess(['run', key, ...args, '--allow-empty', '--repo', repo, '--json'], { env });
  expect(r.code, r.stderr).toBe(0);
  const runId = (JSON.parse(r.stdout) as { runId: string }).runId;
  const logs = await svcInProcess(['logs', runId, key, '--json'], { env });
  expect(logs.code, logs.stderr).toBe(0);
  return (JSON.parse(logs.stdout) as { legs: { log: string }[] }).legs[0]!.log;
}

/** The variables the agent printed, `NAME=value` lines of its `env`. */
const printed = (log: string): Map<string, string> =>
  new Map(
    log
      .split('\n')
      .map((l) => /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(l))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => [m[1]!, m[2]!]),
  );

const modes: [string, string | undefined][] = [
  ['as root, through the default pool', undefined],
  ['with --agent-user none', 'none'],
];

describe.each(modes)('the agent gets an allowlist of svc environment (%s)', (_name, agentUser) => {
  it.skipIf(agentUser === undefined && !isRoot)('no CI, registry or cloud credential reaches it; --agent-env and the workflow env: names do', async () => {
    const repo = await makeRepo();
    mkdirSync(join(repo, '.svc'));
    writeFileSync(join(repo, '.svc', 'workflow.yml'), 'env: [WORKFLOW_NAMED]\nsetup: env\n');
    await run('git', ['add', '.svc'], repo);
    await run('git', ['commit', '-qm', 'workflow'], repo);
    const env = envFor(agentUser, { WORKFLOW_NAMED: 'from-the-workflow', USER_NAMED: 'from-the-flag' });
    const log = await legLog(env, ['--agent-cmd', `sh ${join(open, 'dump.sh')}`, '--agent-env', 'USER_NAMED'], repo);
    const seen = printed(log);
    // The agent did dump its environment, the leg's own variables in it.
    expect(seen.get('SVC_CARD_KEY')).toMatch(/^DEMO-\d+$/);
    expect(seen.has('PATH')).toBe(true);
    for (const name of [...CI_CREDENTIALS, 'SVC_TOKEN', 'SVC_BASE_URL']) expect(seen.has(name), name).toBe(false);
    // svc's own proxy with a password never reaches it; a fenced leg's HTTPS_PROXY is the fence's own.
    if (seen.has('HTTPS_PROXY')) expect(seen.get('HTTPS_PROXY')).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    for (const name of CI_CREDENTIALS) expect(log, name).not.toContain(value(name));
    expect(log).not.toContain('proxy-password-1');
    expect(log).not.toContain(server.token);
    // Named by the user: by the flag, and by the workflow (for the agent and its setup step alike).
    expect(seen.get('USER_NAMED')).toBe('from-the-flag');
    expect(seen.get('WORKFLOW_NAMED')).toBe('from-the-workflow');
    expect(log.match(/^WORKFLOW_NAMED=/gm)?.length).toBe(2);
  });

  it.skipIf(agentUser === undefined && !isRoot)("a preset gets its own key (claude: ANTHROPIC_*), not another preset's", async () => {
    const env = envFor(agentUser, {
      ANTHROPIC_API_KEY: 'claude-key-for-the-preset',
      ANTHROPIC_BASE_URL: 'http://127.0.0.1:9',
      PATH: `${bin}:${process.env.PATH}`,
    });
    const seen = printed(await legLog(env, ['--agent', 'claude'], await makeRepo()));
    expect(seen.get('ANTHROPIC_API_KEY')).toBe('claude-key-for-the-preset');
    expect(seen.get('ANTHROPIC_BASE_URL')).toBe('http://127.0.0.1:9');
    expect(seen.has('OPENAI_API_KEY')).toBe(false);
    for (const name of CI_CREDENTIALS) expect(seen.has(name), name).toBe(false);
  });
});

describe('--agent-env', () => {
  it.each([['SVC_TOKEN'], ['SVC_RUN_TOKEN'], ['svc_token'], ['NOT-A-NAME']])('refuses %s in one line, exit 2', async (name) => {
    const env = envFor('none');
    const r = await svcInProcess(['run', 'DEMO-3', '--agent-cmd', 'true', '--agent-env', name, '--repo', await makeRepo()], { env });
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain(`--agent-env ${name}`);
    expect(r.stdout).toBe('');
  });

  it('is refused in the workflow too: svc workflow check names the line', async () => {
    const repo = await makeRepo();
    mkdirSync(join(repo, '.svc'));
    writeFileSync(join(repo, '.svc', 'workflow.yml'), 'env:\n  - NPM_TOKEN\n  - SVC_TOKEN\n');
    const r = await svcInProcess(['workflow', 'check', '--repo', repo], { env: envFor('none') });
    expect(r.code).toBe(2);
    expect(r.stdout + r.stderr).toMatch(/workflow\.yml:3: env: SVC_TOKEN never reaches an agent/);
  });
});

describe.skipIf(!isRoot)("another card's worktree (docs/trust.md)", () => {
  it('is closed to an agent of the pool, though the repository is open to it', async () => {
    const repo = await makeRepo();
    // The repository open to every user, as a CI checkout is: the agent's clone borrows its objects.
    for (let dir = repo; dir !== tmpdir() && dir !== '/'; dir = join(dir, '..')) chmodSync(dir, 0o755);
    const env = envFor(undefined);
    const first = await card(env, 'leaves a worktree');
    const r = await svcInProcess(['run', first, '--agent-cmd', 'true', '--allow-empty', '--repo', repo, '--json'], { env });
    expect(r.code, r.stderr).toBe(0);
    const peek = join(open, 'peek.sh');
    writeFileSync(
      peek,
      `#!/bin/sh\ncd "$(git config remote.origin.url)" && echo "config: $(test -r config && echo readable)"\nls -a svc-worktrees 2>&1 | sed 's/^/worktrees: /'\n`,
      { mode: 0o755 },
    );
    const log = await legLog(env, ['--agent-cmd', `sh ${peek}`], repo);
    // What the boundary cannot close (docs/trust.md): the repository's config is readable.
    expect(log).toContain('config: readable');
    expect(log).toMatch(/worktrees: .*Permission denied/);
  });
});
