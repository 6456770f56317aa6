// End to end, as a platform runs a hosted run. `svc server --git-root DIR` serves the API and the
// bare repositories; `svc run KEY --hosted` (a person's PAT) opens the run; `svc server run-token`
// mints its credential; then the runner, `SVC_RUN_ID=… SVC_RUN_TOKEN=… svc attach --agent-cmd …`
// with no SVC_TOKEN, clones over HTTP through the credential helper, lets a fake agent commit,
// pushes the branch and closes the run. A scan then looks for the run credential and every git
// token everywhere it could have leaked.
// The runner is the REAL built `bin/svc.js` in its own process, as a platform starts it: the
// credential sits in a real process environment, which its agent must not inherit. The calls
// around it (opening the run, minting the credential, a second attach refused) check codes and
// output, and run the command line in-process (test/support/svc-in-process.ts).
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DispatchRun } from '../../../src/contract/types.js';
import { createRepository, repositoryPath } from '../../../src/server/git/index.js';
import { isolatedEnv, runCli, type CliEnv, type CliResult } from '../../support/cli.js';
import { svcInProcess } from '../../support/svc-in-process.js';
import { startLocalServer, type LocalServer } from '../../support/server-process.js';
import { filesUnder, git, leaks } from '../../support/hosted.js';

const exec = promisify(execFile);
// Loaded as the service loads it (vitest's resolver does not know the `node:sqlite` builtin).
const { DatabaseSync } = createRequire(import.meta.url)('node:sqlite') as typeof import('node:sqlite');

/** Every git token of the local service has this shape (`ghs_` + 36): none may appear anywhere. */
const GIT_TOKEN_SHAPE = /ghs_[A-Za-z0-9]{16,}/;
const RUN_TOKEN_SHAPE = /svc_run_[A-Za-z0-9_-]{8,}/;

const AGENT = `#!/bin/sh
# A fake agent: records its argv and environment, tries the remote on its own (it must fail closed,
# without a prompt: it holds no credential), then commits on its branch.
printf '%s\\n' "$0" "$@" > "$AGENT_LOG_DIR/argv-$SVC_CARD_KEY.txt"
env > "$AGENT_LOG_DIR/env-$SVC_CARD_KEY.txt"
if git ls-remote origin > /dev/null 2> "$AGENT_LOG_DIR/ls-remote-$SVC_CARD_KEY.txt"; then echo reached > "$AGENT_LOG_DIR/ls-remote-reached-$SVC_CARD_KEY"; fi
echo "work for $SVC_CARD_KEY" > "card-$SVC_CARD_KEY.txt"
git add -A && git -c user.name=agent -c user.email=agent@example.invalid commit -qm "$SVC_CARD_KEY: done"
echo "agent done with $SVC_CARD_KEY on $SVC_BRANCH"
`;

let server: LocalServer;
let root: string;
let gitRoot: string;
let personal: CliEnv;
const outputs: CliResult[] = [];

async function svc(args: string[], env: CliEnv, cwd?: string): Promise<CliResult> {
  const r = await svcInProcess(args, { env, cwd });
  outputs.push(r);
  return r;
}

/** `svc ARGS` as a real process; its output is scanned like the rest. */
async function spawned(args: string[], env: CliEnv, cwd?: string): Promise<CliResult> {
  const r = await runCli(args, { env, cwd, timeoutMs: 120_000 });
  outputs.push(r);
  return r;
}

async function api(method: string, path: string, token: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${server.url}/api/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'svc-hosted-cli-'));
  gitRoot = join(root, 'git-root');
  await createRepository(gitRoot, 'acme/widgets', { seedCommit: true });
  await createRepository(gitRoot, 'acme/gadgets', { seedCommit: true });
  server = await startLocalServer(['--git-root', gitRoot]);
  personal = isolatedEnv({ SVC_BASE_URL: server.url, SVC_TOKEN: server.token, SVC_PROJECT: 'DEMO' });
}, 60_000);

afterAll(async () => {
  const violations = await server?.stop();
  expect(violations, 'responses that break the contract document').toEqual([]);
});

describe('svc attach as the hosted runner (real bin/svc.js)', () => {
  it('clones through the helper, the agent commits, the branches are pushed, the run closes, and no token leaks', async () => {
    // Two cards in two repositories of the service's git root.
    const keys: string[] = [];
    for (const [title, repos] of [
      ['Add a widget', { targetRepositories: ['acme/widgets'] }],
      ['Polish gadgets', { targetRepo: 'acme/gadgets' }],
    ] as const) {
      const made = await api('POST', '/projects/DEMO/work-items', server.token, { kind: 'task', type: 'code', title, ...repos });
      expect(made.status, JSON.stringify(made.body)).toBe(201);
      keys.push((made.body.item ?? made.body).key as string);
    }

    // A person opens the hosted run (PAT); the platform mints its credential.
    const opened = await svc(['run', ...keys, '--hosted', '--json'], personal);
    expect(opened.code, opened.stderr).toBe(0);
    const runId = (JSON.parse(opened.stdout) as { run: { id: string } }).run.id;
    const minted = await svc(['server', 'run-token', runId, '--db', server.db], isolatedEnv());
    expect(minted.code, minted.stderr).toBe(0);
    const runToken = minted.stdout.trim();
    expect(runToken).toMatch(/^svc_run_/);

    // The runner: run id and credential, no SVC_TOKEN, a workspace to clone into.
    const workspace = join(root, 'work');
    const agentLogs = join(root, 'agent-logs');
    mkdirSync(workspace, { recursive: true });
    mkdirSync(agentLogs, { recursive: true });
    const agentScript = join(root, 'agent.sh');
    writeFileSync(agentScript, AGENT, { mode: 0o755 });
    const runner = isolatedEnv({
      SVC_BASE_URL: server.url,
      SVC_RUN_ID: runId,
      SVC_RUN_TOKEN: runToken,
      AGENT_LOG_DIR: agentLogs,
      GIT_AUTHOR_NAME: 'svc runner',
      GIT_AUTHOR_EMAIL: 'runner@example.invalid',
    });
    expect(runner.SVC_TOKEN).toBeUndefined();
    const home = runner.HOME!;

    // The platform's own trade (getGitCredential with the run credential), to try a push after the close.
    const early = await api('POST', `/dispatch-runs/${runId}/git-credential`, runToken);
    expect(early.status).toBe(200);
    const earlyToken = (early.body.credentials as Array<{ repository: string; token: string }>).find((c) => c.repository === 'acme/widgets')!.token;

    const r = await spawned(
      ['attach', '--agent-cmd', `sh ${agentScript} {key} {branch}`, '--agent-env', 'AGENT_LOG_DIR', '--send-logs', '--json'],
      runner,
      workspace,
    );
    expect(r.code, r.stderr).toBe(0);
    const summary = JSON.parse(r.stdout) as {
      runId: string;
      stopReason: string;
      status: string;
      legs: Array<{ key: string; disposition: string; reason: string | null }>;
    };
    expect(summary).toMatchObject({ runId, stopReason: 'completed', status: 'succeeded' });
    expect(summary.legs.map((l) => [l.key, l.disposition])).toEqual(keys.map((k) => [k, 'implemented']));

    // Cloned over HTTP into <workspace>/<owner>/<name>, with a plain remote URL.
    const widgets = join(workspace, 'acme', 'widgets');
    const gadgets = join(workspace, 'acme', 'gadgets');
    expect(await git(widgets, 'remote', 'get-url', 'origin')).toBe(`${server.url}/git/acme/widgets.git`);
    expect(await git(gadgets, 'remote', 'get-url', 'origin')).toBe(`${server.url}/git/acme/gadgets.git`);

    // Each branch is in the service's bare repository, at the agent's commit.
    for (const [key, repository, clone] of [
      [keys[0]!, 'acme/widgets', widgets],
      [keys[1]!, 'acme/gadgets', gadgets],
    ] as const) {
      const local = await git(clone, 'rev-parse', `refs/heads/svc/${key}`);
      const remote = await git(repositoryPath(gitRoot, repository), 'rev-parse', '--verify', `refs/heads/svc/${key}`);
      expect(remote).toBe(local);
      expect(await git(repositoryPath(gitRoot, repository), 'log', '-1', '--format=%s', `svc/${key}`)).toBe(`${key}: done`);
    }

    // The run closed completed/succeeded with the run credential, and was never beaten (heartbeatDispatchRun is
    // not the run credential's).
    const record = (await api('GET', `/dispatch-runs/${runId}`, server.token)).body as DispatchRun;
    expect(record).toMatchObject({ origin: 'hosted', status: 'succeeded', stopReason: 'completed', lastHeartbeatAt: null });
    expect(record.cards.map((c) => [c.workItemKey, c.disposition, c.sessionBranch])).toEqual(keys.map((k) => [k, 'implemented', `svc/${k}`]));

    // The agent held no credential: its own call to the remote failed closed, without a prompt.
    for (const key of keys) {
      expect(readdirSync(agentLogs)).not.toContain(`ls-remote-reached-${key}`);
      const env = readFileSync(join(agentLogs, `env-${key}.txt`), 'utf8');
      expect(env).toMatch(/^GIT_TERMINAL_PROMPT=0$/m);
      expect(env).not.toMatch(/^SVC_(TOKEN|RUN_TOKEN|GIT_CREDENTIAL_SOCKET|BASE_URL)=/m);
      expect(env).toContain(`SVC_CARD_KEY=${key}`);
    }

    // After the close: the run credential died with the run (getGitCredential: 401), and a push with a git
    // token of the run is refused.
    const late = await api('POST', `/dispatch-runs/${runId}/git-credential`, runToken);
    expect(late.status).toBe(401);
    // (The leg's worktree is kept: `svc worktrees prune` removes finished ones.)
    const worktree = join(widgets, '.git', 'svc-worktrees', keys[0]!);
    await git(worktree, 'commit', '--quiet', '--allow-empty', '-m', `${keys[0]}: after the close`);
    // (The token reaches this test's helper through its environment: test code, not svc's.)
    const helper = '!f() { test "$1" = get && printf "username=x-access-token\npassword=%s\n" "$LATE_GIT_TOKEN"; }; f';
    const pushed = await exec('git', ['-c', 'credential.helper=', '-c', `credential.helper=${helper}`, 'push', '--quiet', 'origin', `svc/${keys[0]}`], {
      cwd: worktree,
      env: { PATH: process.env.PATH ?? '', HOME: worktree, GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0', LATE_GIT_TOKEN: earlyToken },
    }).then(
      () => 'pushed',
      (e: { stderr?: string }) => e.stderr ?? 'refused',
    );
    expect(pushed).not.toBe('pushed');
    expect(pushed).toMatch(/Authentication failed|401|could not read/i);
    expect(await git(repositoryPath(gitRoot, 'acme/widgets'), 'log', '-1', '--format=%s', `svc/${keys[0]}`)).toBe(`${keys[0]}: done`);
    // Starting the runner again: its credential died with the run (exit 3), nothing is executed.
    const again = await svc(['attach', '--agent-cmd', `sh ${agentScript}`, '--json'], runner, workspace);
    expect(again.code, again.stderr).toBe(3);
    expect(again.stdout).toBe('');

    // The scan: the run credential and every git token (the local service's all look like ghs_…)
    // in no output, no file under the state, config, workspace and agent folders, no stored event,
    // and no argv or environment the agent saw.
    const secrets = [runToken, earlyToken];
    // (`server run-token` prints the credential once, on purpose: that is how the platform gets it.)
    outputs.splice(outputs.indexOf(minted), 1);
    const found = (text: string): string[] => [
      ...leaks(text, secrets),
      ...(GIT_TOKEN_SHAPE.test(text) ? [`git token ${GIT_TOKEN_SHAPE.exec(text)![0].slice(0, 8)}…`] : []),
      ...(RUN_TOKEN_SHAPE.test(text) ? ['a run credential'] : []),
    ];
    for (const out of outputs) {
      expect(found(out.stdout), 'stdout').toEqual([]);
      expect(found(out.stderr), 'stderr').toEqual([]);
    }
    const scanned = [...filesUnder(home), ...filesUnder(workspace), ...filesUnder(agentLogs)];
    expect(scanned.some((f) => f.path.endsWith('journal.jsonl'))).toBe(true);
    expect(scanned.some((f) => f.path.endsWith('run.json'))).toBe(true);
    for (const file of scanned) expect(found(file.text), file.path).toEqual([]);
    const db = new DatabaseSync(server.db, { readOnly: true });
    try {
      const events = db.prepare('SELECT * FROM dispatch_events WHERE run_id = ?').all(runId);
      expect(events.length).toBeGreaterThan(0);
      expect(events.some((e) => typeof (e as { body?: unknown }).body === 'string')).toBe(true);
      expect(found(JSON.stringify(events))).toEqual([]);
      // Tokens were minted (and revoked at the close), so there was something to leak.
      const tokens = db.prepare('SELECT COUNT(*) AS n, SUM(revoked_at IS NOT NULL) AS revoked FROM git_tokens WHERE run_id = ?').get(runId) as {
        n: number;
        revoked: number;
      };
      expect(tokens.n).toBeGreaterThan(0);
      expect(tokens.revoked).toBe(tokens.n);
    } finally {
      db.close();
    }
    for (const key of keys) {
      expect(found(readFileSync(join(agentLogs, `argv-${key}.txt`), 'utf8'))).toEqual([]);
      expect(found(readFileSync(join(agentLogs, `env-${key}.txt`), 'utf8'))).toEqual([]);
    }
  }, 180_000);
});
