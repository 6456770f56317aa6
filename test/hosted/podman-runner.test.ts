// The hosted executor for real, with Podman: `svc server --seed demo --git-root … --hosted-executor
// podman`, then `svc run KEY --hosted`. The service starts the runner image (npm run image; .ci/run
// builds it before the suite), which clones from the service's git remote, runs a shell agent,
// pushes svc/KEY and closes the run. The run credential is looked for in `podman inspect`, the
// container's argv and environment as Podman records them, every process's argv on the host, the
// runner's log and the service's output. A runner that dies before closing its run leaves it
// closed failed, with its exit recorded. Needs podman, runc and the image: missing, they fail here.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DispatchRun } from '../../src/contract/types.js';
import { createRepository, repositoryPath } from '../../src/server/git/index.js';
import { isolatedEnv, type CliEnv } from '../support/cli.js';
import { startLocalServer, type LocalServer } from '../support/server-process.js';
import { svcInProcess } from '../support/svc-in-process.js';
import { git, leaks } from './support.js';

const exec = promisify(execFile);
// Loaded as the service loads it (vitest's resolver does not know the `node:sqlite` builtin).
const { DatabaseSync } = createRequire(import.meta.url)('node:sqlite') as typeof import('node:sqlite');
const ROOT = resolve(import.meta.dirname, '../..');
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const IMAGE = `localhost/svc:${VERSION}`;
const RUN_TOKEN_SHAPE = /svc_run_[A-Za-z0-9]{8,}/;
const GIT_TOKEN_SHAPE = /ghs_[A-Za-z0-9]{16,}/;

// The agent runs in the container as the image's user. It waits for the test's go (a file the test
// makes with `podman exec`, so the container is inspected while it runs), then commits; a card
// whose prompt says "die" kills the runner (its parent, svc) instead, before the run is closed. It
// writes its uid and whether it could read the mounted credential into its file.
const AGENT = [
  'sh',
  '-c',
  [
    'i=0; while [ ! -e /tmp/go ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i+1)); done',
    'if grep -q "die before closing" "$SVC_PROMPT_FILE"; then kill -9 $PPID; sleep 5; fi',
    'if cat /run/secrets/svc-run-token >/dev/null 2>&1; then r=read; else r=refused; fi',
    'echo "work for $SVC_CARD_KEY as uid $(id -u), credential $r" > card.txt && git add card.txt && git -c user.name=agent -c user.email=agent@example.invalid commit -qm "$SVC_CARD_KEY: done"',
  ].join('; '),
]
  .map((w) => (w.includes(' ') ? `'${w.replace(/'/g, `'\\''`)}'` : w))
  .join(' ');

let server: LocalServer;
let root: string;
let gitRoot: string;
let logs: string;
let personal: CliEnv;
const confBefore = process.env.CONTAINERS_CONF;

const podman = async (...args: string[]) => (await exec('podman', args, { env: { ...process.env }, maxBuffer: 16 << 20 })).stdout;

async function api(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${server.url}/api/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${server.token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

/** Polls `probe` until it returns a value (not undefined), or fails after `ms`. */
async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 120_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * `svc server` with the Podman executor and the runner image, on the test's git root: the runners'
 * logs in `logsDir`, `agentCmd` their agent, `extra` further flags.
 */
const podmanService = (logsDir: string, agentCmd: string, extra: string[] = []) =>
  startLocalServer([
    '--git-root',
    gitRoot,
    '--hosted-executor',
    'podman',
    '--hosted-image',
    IMAGE,
    '--hosted-logs',
    logsDir,
    '--hosted-agent-cmd',
    agentCmd,
    ...extra,
  ]);

/** A service of a test's own: its API (JSON in and out), and `svc run KEY --hosted` on a card made there. */
function hostedOn(service: LocalServer) {
  const call = (path: string, init: RequestInit = {}) =>
    fetch(`${service.url}/api/v1${path}`, { ...init, headers: { authorization: `Bearer ${service.token}`, 'content-type': 'application/json' } }).then(
      (r) => r.json() as Promise<any>,
    );
  const open = async (card: { type: string; title: string; repo: string }): Promise<{ key: string; runId: string }> => {
    const made = await call('/projects/DEMO/work-items', {
      method: 'POST',
      body: JSON.stringify({ kind: 'task', type: card.type, title: card.title, targetRepositories: [card.repo] }),
    });
    const opened = await svcInProcess(['run', made.key, '--hosted', '--json'], { env: isolatedEnv({ SVC_BASE_URL: service.url, SVC_TOKEN: service.token }) });
    expect(opened.code, opened.stderr).toBe(0);
    return { key: made.key as string, runId: JSON.parse(opened.stdout).run.id as string };
  };
  return { call, open };
}

async function openHosted(title: string): Promise<{ key: string; runId: string }> {
  const made = await api('POST', '/projects/DEMO/work-items', { kind: 'task', type: 'code', title, targetRepositories: ['acme/widgets'] });
  expect(made.status, JSON.stringify(made.body)).toBe(201);
  const key = (made.body.item ?? made.body).key as string;
  const opened = await svcInProcess(['run', key, '--hosted', '--json'], { env: personal });
  expect(opened.code, opened.stderr).toBe(0);
  return { key, runId: (JSON.parse(opened.stdout) as { run: { id: string } }).run.id };
}

const runOf = async (runId: string) => (await api('GET', `/dispatch-runs/${runId}`)).body as DispatchRun & { agentInstance: Record<string, unknown> | null };

/** The run once its runner has ended and been recorded. */
const ended = (runId: string) =>
  until(`the runner of ${runId} to end`, async () => {
    const run = await runOf(runId);
    return run.agentInstance?.endedAt && run.status !== 'running' ? run : undefined;
  });

beforeAll(async () => {
  // This host's Podman needs runc and cgroupfs (containers.conf says why).
  process.env.CONTAINERS_CONF ??= join(ROOT, 'containers.conf');
  const image = await podman('image', 'inspect', '--format', '{{.Id}}', IMAGE).catch((e: { stderr?: string }) => {
    throw new Error(`the runner image ${IMAGE} is missing: build it with npm run image (.ci/run does). ${e.stderr ?? ''}`);
  });
  expect(image.trim()).not.toBe('');
  root = mkdtempSync(join(tmpdir(), 'svc-podman-'));
  gitRoot = join(root, 'git-root');
  logs = join(root, 'runners');
  await createRepository(gitRoot, 'acme/widgets', { seedCommit: true });
  server = await podmanService(logs, AGENT);
  personal = isolatedEnv({ SVC_BASE_URL: server.url, SVC_TOKEN: server.token, SVC_PROJECT: 'DEMO' });
}, 90_000);

afterAll(async () => {
  const violations = await server?.stop();
  if (confBefore === undefined) delete process.env.CONTAINERS_CONF;
  else process.env.CONTAINERS_CONF = confBefore;
  expect(violations, 'responses that break the contract document').toEqual([]);
});

describe('svc server --hosted-executor podman (real containers)', () => {
  it('starts the image for a hosted run: it clones, the agent commits, svc/KEY is pushed, the run closes succeeded, and the credential is nowhere', async () => {
    const { key, runId } = await openHosted('Add a widget in a container');
    const name = `svc-${runId}`;
    // The container runs (the agent waits for the go): what Podman recorded, and every argv here.
    const inspect = await until('the runner container', () =>
      podman('inspect', name).then(
        (t) => (JSON.parse(t)[0]?.State?.Running ? t : undefined),
        () => undefined,
      ),
    );
    const credentialFile = join(logs, `${runId}.credential`);
    const credential = readFileSync(credentialFile, 'utf8');
    expect(credential).toMatch(/^svc_run_/);
    const hostArgv = (await exec('ps', ['-eo', 'args'], { maxBuffer: 16 << 20 })).stdout;
    const containerArgv = await podman('exec', name, 'sh', '-c', 'for p in /proc/[0-9]*; do tr "\\0" " " < $p/cmdline; echo; done');
    const pid1Env = await podman('exec', name, 'cat', '/proc/1/environ');
    const config = JSON.parse(inspect)[0] as { Config: { Env: string[]; Labels: Record<string, string> }; Args: string[] };
    expect(config.Config.Env).toEqual(expect.arrayContaining([`SVC_RUN_ID=${runId}`, `SVC_BASE_URL=${server.url}`]));
    expect(config.Config.Labels['svc.run-id']).toBe(runId);
    expect(config.Args).toEqual(expect.arrayContaining(['attach', '--agent-cmd']));
    await podman('exec', name, 'touch', '/tmp/go');

    const run = await ended(runId);
    expect(run).toMatchObject({ origin: 'hosted', status: 'succeeded', stopReason: 'completed' });
    expect(run.cards.map((c) => [c.workItemKey, c.disposition, c.sessionBranch])).toEqual([[key, 'implemented', `svc/${key}`]]);
    const logFile = join(logs, `${runId}.log`);
    expect(run.agentInstance).toMatchObject({ engine: 'podman', name, image: IMAGE, state: 'exited', exitCode: 0, logs: logFile, error: null });
    // The branch is in the service's bare repository, at the agent's commit.
    expect(await git(repositoryPath(gitRoot, 'acme/widgets'), 'log', '-1', '--format=%s', `svc/${key}`)).toBe(`${key}: done`);
    // The agent ran as the image's user, svc's own, and could read the credential file: the weakness
    // of a non-root runner (docs/hosted.md, "The security context"); --hosted-as-root closes it (below).
    expect(await git(repositoryPath(gitRoot, 'acme/widgets'), 'show', `svc/${key}:card.txt`)).toBe(`work for ${key} as uid 10001, credential read`);
    const log = readFileSync(logFile, 'utf8');
    expect(log).toContain(`${key}: pushed svc/${key}`);
    // The credential file went with the container; the credential died with the run.
    expect(existsSync(credentialFile)).toBe(false);
    const shown = await svcInProcess(['runs', 'show', runId], { env: personal });
    expect(shown.stdout).toContain(`runner podman ${name} · exited 0 · logs ${logFile}`);

    // (Other processes of this machine are not ours to judge by token shape: the exact credential only.)
    expect(leaks(hostArgv, [credential]), 'argv of the host').toEqual([]);
    const texts = { inspect, containerArgv, pid1Env, log, shown: shown.stdout + shown.stderr };
    for (const [where, text] of Object.entries(texts)) {
      expect(leaks(text, [credential]), where).toEqual([]);
      expect(RUN_TOKEN_SHAPE.test(text) ? where : null).toBeNull();
      expect(GIT_TOKEN_SHAPE.test(text) ? where : null).toBeNull();
    }
  }, 180_000);

  it("a runner that dies before closing its run leaves it closed failed with the runner's exit, never succeeded", async () => {
    const { runId } = await openHosted('Runner must die before closing the run');
    const name = `svc-${runId}`;
    await until('the runner container', () =>
      podman('container', 'exists', name).then(
        () => true,
        () => undefined,
      ),
    );
    await podman('exec', name, 'touch', '/tmp/go');
    const run = await ended(runId);
    expect(run).toMatchObject({ status: 'failed', stopReason: 'abandoned' });
    // (Its leg is `failed` or, when svc died before its `running` event was flushed, `not_reached`.)
    expect(run.cards.map((c) => c.disposition)).not.toContain('implemented');
    // svc killed by SIGKILL: the entry point's exit is 137 (catatonit passes the signal's status on).
    expect(run.agentInstance).toMatchObject({ engine: 'podman', state: 'exited' });
    expect(run.agentInstance?.exitCode).not.toBe(0);
    expect(typeof run.agentInstance?.exitCode).toBe('number');
  }, 180_000);

  /** A second service whose runners' agent never ends, with one hosted run whose agent has started. */
  async function waitingRun(extra: string[]): Promise<{ service: LocalServer; runId: string }> {
    const service = await podmanService(mkdtempSync(join(root, 'waiting-')), 'sleep 600', extra);
    const { call, open } = hostedOn(service);
    try {
      const { runId } = await open({ type: 'chore', title: 'Never ends', repo: 'acme/widgets' });
      // The agent is running once the runner reported its leg (seq ≥ 1), or the run already ended.
      await until("the runner's first event", async () => {
        const r = await call(`/dispatch-runs/${runId}`);
        return r.seq >= 1 || r.status !== 'running' ? true : undefined;
      });
      return { service, runId };
    } catch (error) {
      await service.stop();
      throw error;
    }
  }

  const stored = (db: string, runId: string) => {
    const d = new DatabaseSync(db);
    try {
      return {
        run: d.prepare('SELECT status, stop_reason FROM dispatch_runs WHERE id = ?').get(runId),
        runner: d.prepare('SELECT state, exit_code FROM hosted_runners WHERE run_id = ?').get(runId) as { state: string; exit_code: number | null },
      };
    } finally {
      d.close();
    }
  };

  it('stopping svc server stops its runners first: the run is closed interrupted while the service still answers', async () => {
    const { service, runId } = await waitingRun([]);
    expect(await service.stop()).toEqual([]);
    const { run, runner } = stored(service.db, runId);
    expect(run).toEqual({ status: 'cancelled', stop_reason: 'interrupted' });
    expect(runner.state).toBe('exited');
    await expect(podman('container', 'exists', `svc-${runId}`)).rejects.toThrow();
  }, 180_000);

  it('past --hosted-timeout the service closes the run timed_out and stops its runner', async () => {
    const { service, runId } = await waitingRun(['--hosted-timeout', '4s']);
    try {
      await until('the runner stopped at its deadline', async () => (stored(service.db, runId).runner.state === 'timed out' ? true : undefined), 60_000);
      const { run, runner } = stored(service.db, runId);
      expect(run).toEqual({ status: 'timed_out', stop_reason: 'abandoned' });
      expect(runner.exit_code).not.toBe(0);
      await expect(podman('container', 'exists', `svc-${runId}`)).rejects.toThrow();
    } finally {
      expect(await service.stop()).toEqual([]);
    }
  }, 180_000);

  it('--hosted-as-root: svc runs as root in the container and its agent as a uid of its own, which cannot read the credential', async () => {
    // The agent records its uid and whether it could read the mounted credential, in its commit.
    // (Without --hosted-as-root it records the image's uid 10001 and `credential read`.)
    const agent = `sh -c 'if cat /run/secrets/svc-run-token >/dev/null 2>&1; then r=read; else r=refused; fi; echo x > a.txt; git add a.txt; git -c user.name=a -c user.email=a@x commit -qm "$SVC_CARD_KEY: uid $(id -u) credential $r"'`;
    // A service of its own numbers its cards from DEMO-11 again: a repository of its own, too.
    await createRepository(gitRoot, 'acme/apart', { seedCommit: true });
    const service = await podmanService(mkdtempSync(join(root, 'as-root-')), agent, ['--hosted-as-root']);
    try {
      const { call, open } = hostedOn(service);
      const { key, runId } = await open({ type: 'code', title: 'Agent apart', repo: 'acme/apart' });
      const run = await until('the run to end', async () => {
        const r = await call(`/dispatch-runs/${runId}`);
        return r.status !== 'running' && r.agentInstance?.endedAt ? r : undefined;
      });
      expect(run).toMatchObject({ status: 'succeeded', agentInstance: { exitCode: 0 } });
      const subject = await git(repositoryPath(gitRoot, 'acme/apart'), 'log', '-1', '--format=%s', `svc/${key}`);
      const uid = Number(/uid (\d+)/.exec(subject)?.[1]);
      expect(subject).toMatch(new RegExp(`^${key}: uid \\d+ credential refused$`));
      // Neither root (svc) nor the image's user (10001): a uid of the leg's own.
      expect(uid).not.toBe(0);
      expect(uid).not.toBe(10001);
    } finally {
      expect(await service.stop()).toEqual([]);
    }
  }, 180_000);
});
