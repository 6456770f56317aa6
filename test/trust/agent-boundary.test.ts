// The agent boundary (docs/trust.md "Threat model"), as root, end to end: the real built
// `bin/svc.js` executes a hosted run (`svc attach`) against `svc server --git-root`, with no
// --agent-user, so svc leases a user of its default pool (svc-agent-N) itself. The agent is an attacker
// (fixtures/attacker-agent.sh): it reads /proc/<pid>/environ of svc and every ancestor, lists and
// reads svc's state and config folders, connects to every socket there (the test hands it the
// broker socket's exact path), asks `git credential fill` for the run's repository, and pushes to
// `main`. It must get nothing, while its commit reaches the service on svc/KEY, pushed by svc, and
// the run closes `completed`. A control run with `--agent-user none` shows the same agent does get
// the run credential without the boundary, so the checks can fail.
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DispatchRun } from '../../src/contract/types.js';
import { repositoryPath } from '../../src/server/git/index.js';
import { isolatedEnv, runCli, type CliEnv, type CliResult } from '../support/cli.js';
import type { LocalServer } from '../support/server-process.js';
import { svcInProcess } from '../support/svc-in-process.js';
import { startBoundaryWorld, type BoundaryWorld } from './boundary-world.js';
import { filesUnder, git, leaks } from '../support/hosted.js';

const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
const GIT_TOKEN_SHAPE = /ghs_[A-Za-z0-9]{16,}/;

let world: BoundaryWorld;
let server: LocalServer;
/** Private to root (0700): the service's git root. */
let hidden: string;
/** Open to the agent user (0755): the agent script, the workspace, the rendezvous folder. */
let open: string;
let personal: CliEnv;

beforeAll(async () => {
  if (!isRoot) return;
  world = await startBoundaryWorld('svc-boundary', { 'attacker-agent.sh': 'attacker.sh' });
  ({ server, hidden, open, personal } = world);
}, 60_000);

afterAll(async () => {
  const violations = await world?.stop();
  expect(violations ?? [], 'responses that break the contract document').toEqual([]);
});

interface Attempt {
  outputs: CliResult[];
  key: string;
  runId: string;
  runToken: string;
  home: string;
  stateDir: string;
  configDir: string;
  rdv: string;
  workspace: string;
  /** The sockets the test found (as root) under svc's state folder while the agent ran. */
  sockets: string[];
  attach: CliResult;
}

/** Opens a hosted run over one card and executes it with the attacker as its agent. */
async function attack(name: string, extraArgs: string[]): Promise<Attempt> {
  const outputs: CliResult[] = [];
  const key = await world.createItem(`Boundary ${name}`, { targetRepositories: ['acme/widgets'] });
  // Opening the run and minting its credential are not under test: in-process. The attach below is
  // a real process, since the agent reads /proc of svc and its ancestors.
  const opened = await svcInProcess(['run', key, '--hosted', '--json'], { env: personal });
  expect(opened.code, opened.stderr).toBe(0);
  const runId = (JSON.parse(opened.stdout) as { run: { id: string } }).run.id;
  const minted = await svcInProcess(['server', 'run-token', runId, '--db', server.db]);
  const runToken = minted.stdout.trim();
  expect(runToken).toMatch(/^svc_run_/);

  // The runner's home is open (0755) and its state and config folders start open too: svc itself
  // must close them, not the test's temp folder.
  const runner = isolatedEnv({
    SVC_BASE_URL: server.url,
    SVC_RUN_ID: runId,
    SVC_RUN_TOKEN: runToken,
    SVC_AGENT_USER: undefined,
    GIT_AUTHOR_NAME: 'svc runner',
    GIT_AUTHOR_EMAIL: 'runner@example.invalid',
    GIT_COMMITTER_NAME: 'svc runner',
    GIT_COMMITTER_EMAIL: 'runner@example.invalid',
    // The user's own settings for the agent (a model endpoint, named with --agent-env) must still reach it.
    ANTHROPIC_BASE_URL: 'http://127.0.0.1:9/mock-model',
  });
  const home = runner.HOME!;
  const stateDir = runner.SVC_STATE_DIR!;
  const configDir = runner.SVC_CONFIG_DIR!;
  chmodSync(home, 0o755);
  mkdirSync(stateDir, { mode: 0o755 });
  mkdirSync(configDir, { mode: 0o755 });
  chmodSync(stateDir, 0o755);
  chmodSync(configDir, 0o755);
  const stored = await svcInProcess(['config', 'set', 'parallel', '1'], { env: runner });
  expect(stored.code, stored.stderr).toBe(0);
  expect(existsSync(join(configDir, 'config.json'))).toBe(true);

  const rdv = join(open, `rdv-${name}`);
  const workspace = join(open, `work-${name}`);
  mkdirSync(rdv);
  chmodSync(rdv, 0o777);
  mkdirSync(workspace);
  const remote = `${server.url}/git/acme/widgets.git`;
  const clone = join(workspace, 'acme', 'widgets');
  const agentCmd = `bash ${join(open, 'attacker.sh')} {key} ${stateDir} ${configDir} ${rdv} ${remote} ${clone}`;
  const running = runCli(['attach', '--agent-cmd', agentCmd, '--agent-env', 'ANTHROPIC_BASE_URL', '--json', ...extraArgs], {
    env: runner,
    cwd: workspace,
    timeoutMs: 120_000,
  });

  // When the agent is up, hand it the exact path of every socket under svc's folders.
  const sockets: string[] = [];
  const deadline = Date.now() + 60_000;
  while (!existsSync(join(rdv, `ready-${key}`)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  if (existsSync(join(rdv, `ready-${key}`))) {
    const found = execFileSync('find', [stateDir, configDir, '-type', 's'], { encoding: 'utf8' }).split('\n').filter(Boolean);
    sockets.push(...found);
    writeFileSync(join(rdv, `targets-${key}`), found.join('\n') + '\n', { mode: 0o644 });
  }
  const attach = await running;
  outputs.push(opened, attach);
  return { outputs, key, runId, runToken, home, stateDir, configDir, rdv, workspace, sockets, attach };
}

function report(a: Attempt): Array<{ what: string; target: string; verdict: string; detail: string }> {
  return readFileSync(join(a.rdv, `report-${a.key}.txt`), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [, what, target, verdict, ...rest] = line.split(' ');
      return { what: what!, target: target!, verdict: verdict!, detail: rest.join(' ') };
    });
}

describe.skipIf(!isRoot)('the agent boundary, as root (real bin/svc.js, hosted run)', () => {
  it('an attacking agent gets nothing, while its commit is pushed by svc and the run completes', async () => {
    const a = await attack('boundary', []);
    expect(a.attach.code, a.attach.stderr).toBe(0);
    const summary = JSON.parse(a.attach.stdout) as {
      stopReason: string;
      status: string;
      legs: Array<{ key: string; disposition: string; reason: string | null }>;
    };
    expect(summary).toMatchObject({ stopReason: 'completed', status: 'succeeded' });
    expect(summary.legs.map((l) => [l.key, l.disposition, l.reason])).toEqual([[a.key, 'implemented', null]]);

    // It ran as an unprivileged user with no supplementary groups, in a clone of its own, with a
    // home it can write.
    const id = readFileSync(join(a.rdv, `id-${a.key}.txt`), 'utf8');
    const [uid, gid] = /^uid (\d+) gid (\d+)/.exec(id)!.slice(1).map(Number);
    expect(uid).not.toBe(0);
    expect(id).toMatch(new RegExp(`^Groups:\\s*(${gid})?\\s*$`, 'm'));
    expect(id).toContain('home writable');
    const pwd = readFileSync(join(a.rdv, `pwd-${a.key}.txt`), 'utf8').trim();
    expect(pwd.startsWith(a.workspace)).toBe(false);

    // Every attempt came back empty-handed, and each kind was really tried.
    const checks = report(a);
    // The agent's parent is the leg's own shell (its uid, its environment): no ancestor of svc's.
    expect(
      checks.filter((c) => c.verdict === 'SELF').map((c) => c.what),
      JSON.stringify(checks.filter((c) => c.what.includes('environ'))),
    ).toEqual(['own-environ']);
    expect(
      checks.filter((c) => c.verdict !== 'DENIED' && c.verdict !== 'SELF'),
      JSON.stringify(checks, null, 1),
    ).toEqual([]);
    const environ = checks.filter((c) => c.what === 'environ');
    expect(environ.length).toBeGreaterThanOrEqual(2);
    expect(environ.at(-1)!.target).toBe('1');
    for (const c of environ) expect(c.detail).toMatch(/Permission denied/);
    for (const what of ['list', 'read']) {
      const tried = checks.filter((c) => c.what === what);
      expect(tried.length).toBeGreaterThan(0);
      for (const c of tried) expect(c.detail, `${what} ${c.target}`).toMatch(/Permission denied/);
    }
    // The broker's socket existed, in svc's private state folder, and the agent knew its path.
    expect(
      a.sockets.some((s) => s.startsWith(join(a.stateDir, 'private')) && s.endsWith('broker.sock')),
      a.sockets.join(','),
    ).toBe(true);
    const socketTries = checks.filter((c) => c.what === 'socket');
    for (const s of a.sockets) expect(socketTries.find((c) => c.target === s)?.detail).toMatch(/Permission denied/);
    expect(checks.filter((c) => c.what === 'credential-fill')).toHaveLength(2);
    expect(checks.filter((c) => c.what === 'push')).toHaveLength(2);

    // svc's folders are private (0700), whatever they were before.
    expect(statSync(a.stateDir).mode & 0o777).toBe(0o700);
    expect(statSync(a.configDir).mode & 0o777).toBe(0o700);

    // main is untouched; svc/KEY carries the agent's commit, pushed by svc; svc's clone has it too.
    const bare = repositoryPath(join(hidden, 'git-root'), 'acme/widgets');
    expect(await git(bare, 'log', '-1', '--format=%s', 'main')).toBe('Initial commit');
    expect(await git(bare, 'log', '-1', '--format=%s', `svc/${a.key}`)).toBe(`${a.key}: done`);
    const clone = join(a.workspace, 'acme', 'widgets');
    expect(await git(clone, 'rev-parse', `svc/${a.key}`)).toBe(await git(bare, 'rev-parse', `svc/${a.key}`));
    const record = (await (
      await fetch(`${server.url}/api/v1/dispatch-runs/${a.runId}`, { headers: { authorization: `Bearer ${server.token}` } })
    ).json()) as DispatchRun;
    expect(record).toMatchObject({ status: 'succeeded', stopReason: 'completed' });

    // Nothing it saw or kept holds a credential; its environment names none of svc's folders.
    const loot = filesUnder(a.rdv);
    const ownEnv = readFileSync(join(a.rdv, `loot-${a.key}`, 'own-env.txt'), 'utf8');
    expect(ownEnv).not.toMatch(/^SVC_(TOKEN|RUN_TOKEN|GIT_CREDENTIAL_SOCKET|BASE_URL|STATE_DIR|CONFIG_DIR)=/m);
    expect(ownEnv).not.toContain(a.home);
    expect(ownEnv).toMatch(/^ANTHROPIC_BASE_URL=http:\/\/127\.0\.0\.1:9\/mock-model$/m);
    expect(ownEnv).toMatch(new RegExp(`^HOME=${tmpdir()}/svc-agent-legs-\\w+/${a.key}-\\w+/home$`, 'm'));
    for (const f of [...loot, ...a.outputs.map((o, i) => ({ path: `output ${i}`, text: o.stdout + o.stderr }))]) {
      expect(leaks(f.text, [a.runToken, server.token]), f.path).toEqual([]);
      expect(GIT_TOKEN_SHAPE.test(f.text), f.path).toBe(false);
    }
    // The agent's clone and home went away with its leg.
    expect(
      readdirSync(tmpdir())
        .filter((d) => d.startsWith('svc-agent-legs-'))
        .some((d) => readdirSync(join(tmpdir(), d)).some((leg) => leg.startsWith(`${a.key}-`))),
    ).toBe(false);
  }, 180_000);

  it('a local run as root: the agent runs as the default user in its own clone of a private repository, and its commit lands on svc/KEY', async () => {
    const repo = mkdtempSync(join(hidden, 'repo-'));
    await git(repo, 'init', '-q', '-b', 'main');
    await git(repo, 'commit', '-q', '--allow-empty', '-m', 'init');
    const key = await world.createItem('Local boundary');
    const out = join(open, 'local-out');
    mkdirSync(out);
    chmodSync(out, 0o777);
    const script = join(open, 'local-agent.sh');
    writeFileSync(
      script,
      `id -u > ${out}/uid; cat "$SVC_PROMPT_FILE" > ${out}/prompt; printf '%s\n' "$PWD" > ${out}/pwd; echo x > f.txt; git add f.txt; git commit -qm "$SVC_CARD_KEY: local"\n`,
      { mode: 0o755 },
    );
    const env = isolatedEnv({
      SVC_BASE_URL: server.url,
      SVC_TOKEN: server.token,
      SVC_PROJECT: 'DEMO',
      SVC_AGENT_USER: undefined,
      GIT_AUTHOR_NAME: 'dev',
      GIT_AUTHOR_EMAIL: 'dev@example.invalid',
      GIT_COMMITTER_NAME: 'dev',
      GIT_COMMITTER_EMAIL: 'dev@example.invalid',
    });
    const r = await runCli(['run', key, '--agent-cmd', `sh ${script}`, '--repo', repo, '--json'], { env, timeoutMs: 120_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ status: 'succeeded', legs: [{ key, disposition: 'implemented' }] });
    expect(Number(readFileSync(join(out, 'uid'), 'utf8'))).not.toBe(0);
    expect(readFileSync(join(out, 'prompt'), 'utf8')).toContain(key);
    expect(readFileSync(join(out, 'pwd'), 'utf8').startsWith(repo)).toBe(false);
    expect(await git(repo, 'log', '-1', '--format=%s', `svc/${key}`)).toBe(`${key}: local`);
    expect(await git(repo, 'log', '-1', '--format=%s', 'main')).toBe('init');
  }, 120_000);

  it('control: with --agent-user none the same agent does read the run credential (the checks can fail)', async () => {
    const a = await attack('control', ['--agent-user', 'none']);
    expect(a.attach.stderr).toMatch(/--agent-user none: agents run as root/);
    const got = report(a).filter((c) => c.verdict === 'GOT');
    expect(got.some((c) => c.what === 'environ')).toBe(true);
    expect(got.some((c) => c.what === 'socket')).toBe(true);
    expect(readFileSync(join(a.rdv, `loot-${a.key}`, 'svc-environ.txt'), 'utf8')).toContain(`SVC_RUN_TOKEN=${a.runToken}`);
  }, 180_000);
});
