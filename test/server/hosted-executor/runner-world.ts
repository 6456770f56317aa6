// The world of the runner suite (runner-suite.ts) on one engine: `svc server` with that engine's
// executor on a git root of the suite's own, the engine's CLI, and the helpers the tests share.
// runnerWorld() registers the suite's beforeAll (the image must be there; the service started)
// and afterAll (the service stopped, no contract violation).
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, readlinkSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect } from 'vitest';
import type { DispatchRun } from '../../../src/contract/types.js';
import { RUNNER_AGENT_UIDS } from '../../../src/dispatch/boundary/user.js';
import { createRepository, repositoryPath } from '../../../src/server/git/index.js';
import { isolatedEnv, type CliEnv } from '../../support/cli.js';
import { startLocalServer, type LocalServer } from '../../support/server-process.js';
import { svcInProcess } from '../../support/svc-in-process.js';
import { git } from '../../support/hosted.js';

const exec = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../../..');
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
/** The runner image: SVC_IMAGE_TAG, as npm run image takes it, else localhost/svc:<version>. */
export const IMAGE = process.env.SVC_IMAGE_TAG || `localhost/svc:${VERSION}`;

/** An agent command line: `sh -c SCRIPT NAME ARGS…`, each word quoted as --agent-cmd splits them. */
export const shellAgent = (script: string, ...args: string[]) =>
  ['sh', '-c', script, ...args].map((w) => (/^[A-Za-z0-9_./:-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`)).join(' ');

// The agent waits for the test's go (a file the test makes with `ENGINE exec`, so the container is
// inspected while it runs), then commits its uid and whether it could read the mounted credential.
const AGENT = shellAgent(
  [
    'i=0; while [ ! -e /tmp/go ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i+1)); done',
    'if cat /run/secrets/svc-run-token >/dev/null 2>&1; then r=read; else r=refused; fi',
    'echo "work for $SVC_CARD_KEY as uid $(id -u), credential $r" > card.txt && git add card.txt && git -c user.name=agent -c user.email=agent@example.invalid commit -qm "$SVC_CARD_KEY: done"',
  ].join('; '),
);

export const inRange = (uid: number) => uid >= RUNNER_AGENT_UIDS.first && uid <= RUNNER_AGENT_UIDS.last;

/** The suite's world on `engine`; its fields hold once beforeAll has run. */
export function runnerWorld(engine: 'podman' | 'docker') {
  let server: LocalServer;
  let root: string;
  let gitRoot: string;
  let logs: string;
  let personal: CliEnv;
  const confBefore = process.env.CONTAINERS_CONF;

  const cli = async (...args: string[]) => (await exec(engine, args, { env: { ...process.env }, maxBuffer: 16 << 20 })).stdout;
  const exists = (name: string) =>
    cli('container', 'inspect', name).then(
      () => true,
      () => false,
    );
  /** Kills svc in the runner (as the container's root): a runner that dies before closing its run. */
  // The container ends as svc does, and the engine may end this exec with it before its shell
  // exits: its status says nothing, the run's close (what the tests check) does.
  const killSvc = (name: string) =>
    cli(
      'exec',
      name,
      'sh',
      '-c',
      'for p in /proc/[0-9]*; do tr "\\0" " " < $p/cmdline | grep -q "^node /opt/svc/bin/svc.js" && kill -9 ${p#/proc/}; done; true',
    ).catch(() => '');

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

  /** `svc server` with this engine's executor and the runner image: the runners' logs in `logsDir`, `agentCmd` their agent. */
  const service = (logsDir: string, agentCmd: string, extra: string[] = []) =>
    startLocalServer([
      '--git-root',
      gitRoot,
      '--hosted-executor',
      engine,
      '--hosted-image',
      IMAGE,
      '--hosted-logs',
      logsDir,
      '--hosted-agent-cmd',
      agentCmd,
      ...extra,
    ]);

  /** A service of a test's own: its API (JSON in and out), and `svc run KEY --hosted` on a card made there. */
  function hostedOn(s: LocalServer) {
    const call = (path: string, init: RequestInit = {}) =>
      fetch(`${s.url}/api/v1${path}`, { ...init, headers: { authorization: `Bearer ${s.token}`, 'content-type': 'application/json' } }).then(
        (r) => r.json() as Promise<any>,
      );
    const open = async (card: { type: string; title: string; repo: string }): Promise<{ key: string; runId: string }> => {
      const made = await call('/projects/DEMO/work-items', {
        method: 'POST',
        body: JSON.stringify({ kind: 'task', type: card.type, title: card.title, targetRepositories: [card.repo] }),
      });
      const opened = await svcInProcess(['run', made.key, '--hosted', '--json'], { env: isolatedEnv({ SVC_BASE_URL: s.url, SVC_TOKEN: s.token }) });
      expect(opened.code, opened.stderr).toBe(0);
      return { key: made.key as string, runId: JSON.parse(opened.stdout).run.id as string };
    };
    const ended = (runId: string) =>
      until(`the run ${runId} and its runner to end`, async () => {
        const r = await call(`/dispatch-runs/${runId}`);
        return r.status !== 'running' && r.agentInstance?.endedAt ? (r as DispatchRun & { agentInstance: Record<string, unknown> }) : undefined;
      });
    return { call, open, ended };
  }

  async function openHosted(title: string, type = 'code'): Promise<{ key: string; runId: string }> {
    const made = await api('POST', '/projects/DEMO/work-items', { kind: 'task', type, title, targetRepositories: ['acme/widgets'] });
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

  /** The running container of a run, once its agent has started (the run's first leg event). */
  const runningAgent = async (runId: string) => {
    await until('the runner container', async () => ((await exists(`svc-${runId}`)) ? true : undefined));
    await until("the runner's first event", async () => ((await runOf(runId)).seq >= 1 ? true : undefined));
    return `svc-${runId}`;
  };

  /**
   * The host pids of every process of a container (those in the pid namespace of its first
   * process) but the agent's passing `sleep 0.1`s, which end by themselves.
   */
  async function hostPids(name: string): Promise<number[]> {
    const init = (await cli('inspect', '--format', '{{.State.Pid}}', name)).trim();
    const ns = readlinkSync(`/proc/${init}/ns/pid`);
    return readdirSync('/proc')
      .filter((p) => /^\d+$/.test(p))
      .filter((p) => {
        try {
          return readlinkSync(`/proc/${p}/ns/pid`) === ns && readFileSync(`/proc/${p}/comm`, 'utf8').trim() !== 'sleep';
        } catch {
          return false;
        }
      })
      .map(Number);
  }

  const mainOf = (repo: string) => git(repositoryPath(gitRoot, repo), 'rev-parse', 'refs/heads/main');

  beforeAll(async () => {
    // This host's Podman needs runc and cgroupfs (containers.conf says why).
    if (engine === 'podman') process.env.CONTAINERS_CONF ??= join(ROOT, 'containers.conf');
    const image = await cli('image', 'inspect', '--format', '{{.Id}}', IMAGE).catch((e: { stderr?: string }) => {
      throw new Error(`the runner image ${IMAGE} is missing in ${engine}: build it with npm run image (.ci/run does). ${e.stderr ?? ''}`);
    });
    expect(image.trim()).not.toBe('');
    root = mkdtempSync(join(tmpdir(), `svc-${engine}-`));
    gitRoot = join(root, 'git-root');
    logs = join(root, 'runners');
    await createRepository(gitRoot, 'acme/widgets', { seedCommit: true });
    server = await service(logs, AGENT);
    personal = isolatedEnv({ SVC_BASE_URL: server.url, SVC_TOKEN: server.token, SVC_PROJECT: 'DEMO' });
  }, 90_000);

  afterAll(async () => {
    const violations = await server?.stop();
    if (confBefore === undefined) delete process.env.CONTAINERS_CONF;
    else process.env.CONTAINERS_CONF = confBefore;
    expect(violations, 'responses that break the contract document').toEqual([]);
  });

  return {
    engine,
    get server() {
      return server;
    },
    get root() {
      return root;
    },
    get gitRoot() {
      return gitRoot;
    },
    get logs() {
      return logs;
    },
    get personal() {
      return personal;
    },
    cli,
    exists,
    killSvc,
    api,
    until,
    service,
    hostedOn,
    openHosted,
    runOf,
    ended,
    runningAgent,
    hostPids,
    mainOf,
  };
}
