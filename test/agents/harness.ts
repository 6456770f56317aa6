// Drives one real agent CLI through the real, built `svc run` against the real local service and
// the mock model: one fresh service, repository and agent home per scenario, so nothing one
// scenario leaves behind (a branch, a leg, a session file) can make another pass.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import type { DispatchRun } from '../../src/contract/types.js';
import type { LegSummary } from '../../src/dispatch/ports.js';
import { BIN, isolatedEnv, run, type CliEnv } from '../support/cli.js';
import { startServerProcess } from '../support/server-process.js';
import type { Fault, MockModel, RecordedRequest } from './mock-model.js';

/** Installed by `scripts/install-agents.mjs` (the globalSetup of test/agents runs it). */
export function agentsBin(): string {
  const dir = process.env.SVC_AGENTS_DIR;
  if (!dir) throw new Error('SVC_AGENTS_DIR is not set: run `npm run test:agents`');
  return join(dir, 'node_modules', '.bin');
}

/** How svc is started: extra arguments of its own. */
export type Launch = { kind: 'direct'; args?: string[] };

export interface AgentHarness {
  agent: 'claude' | 'codex' | 'gemini' | 'opencode';
  /** Writes the agent's config into its isolated home and returns the environment it needs. */
  configure(home: string, mockUrl: string): CliEnv;
  launch?: Launch;
}

export interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
  leg: LegSummary;
  /** The leg as the service stored it. */
  card: DispatchRun['cards'][number];
  runStatus: string;
  requests: RecordedRequest[];
  /** Subjects on svc/KEY, newest first, that are not on main. */
  branchCommits: string[];
  /** The leg's local log: the agent's stdout and stderr as svc kept them. */
  log: string;
  /** The uid the agent's shell call ran as (ran-as.txt on svc/KEY), or null when it committed nothing. */
  ranAs: number | null;
}

export const KEY = 'DEMO-3';
/** The model's one shell call: it also records the uid it ran as (svc as root runs agents as a pool user). */
export const COMMIT = `id -u > ran-as.txt && echo done > ${KEY}.txt && git add -A && git commit -qm "${KEY}: done by the mock model"`;

export async function scenario(h: AgentHarness, mock: MockModel, opts: { fault?: Fault; model?: string } = {}): Promise<Outcome> {
  const server = await startServerProcess();
  try {
    const work = mkdtempSync(join(tmpdir(), `svc-agents-${h.agent}-`));
    const repo = join(work, 'repo');
    const home = join(work, 'home');
    mkdirSync(repo);
    mkdirSync(home);
    await run('git', ['init', '-q', '-b', 'main'], repo);
    await run('git', ['config', 'user.name', 'Mock Agent'], repo);
    await run('git', ['config', 'user.email', 'agent@example.invalid'], repo);
    await run('git', ['commit', '-q', '--allow-empty', '-m', 'init'], repo);
    mock.reset({ command: COMMIT, ...(opts.fault ? { fault: opts.fault } : {}) });

    const launch = h.launch ?? { kind: 'direct' };
    const env = isolatedEnv({
      ...h.configure(home, mock.url),
      HOME: home,
      SVC_CONFIG_DIR: join(home, 'svc-config'),
      SVC_STATE_DIR: join(home, 'svc-state'),
      SVC_BASE_URL: server.url,
      SVC_TOKEN: server.token,
      SVC_PROJECT: 'DEMO',
      SVC_HEARTBEAT_INTERVAL: '1s',
      // As root (CI), svc's default: each agent runs as a user of svc's pool, in a clone of its own,
      // with the settings written into `home` (root's, for svc) copied into its private home.
      SVC_AGENT_USER: undefined,
      PATH: [agentsBin(), dirname(process.execPath), process.env.PATH].join(delimiter),
    });
    // The mock model stands where a team's own model endpoint would, configured in the agent's own
    // settings (not a variable svc knows): fenced legs reach it as such a team's would, named.
    const args = [
      'run',
      KEY,
      '--agent',
      h.agent,
      '--repo',
      repo,
      '--json',
      '--idle-timeout',
      '2m',
      '--card-timeout',
      '4m',
      '--allow-host',
      new URL(mock.url).host,
    ];
    if (opts.model) args.push('--model', opts.model);
    args.push(...(launch.args ?? []));
    const r = await svc(args, env);
    const summary = parseJson<{ runId: string; legs: LegSummary[] }>(r.stdout, r);
    const shown = await svc(['runs', 'show', summary.runId, '--json'], env);
    const record = parseJson<DispatchRun>(shown.stdout, shown);
    const branches = await run('git', ['-c', 'safe.directory=*', 'branch', '--list', `svc/${KEY}`], repo);
    const branchCommits = branches.trim()
      ? (await run('git', ['-c', 'safe.directory=*', 'log', '--format=%s', `main..svc/${KEY}`], repo)).split('\n').filter(Boolean)
      : [];
    const ranAs = branchCommits.length ? Number((await run('git', ['-c', 'safe.directory=*', 'show', `svc/${KEY}:ran-as.txt`], repo)).trim()) : null;
    const violations = await server.stop();
    if (violations.length) throw new Error(`service answers broke the contract: ${violations.join('\n')}`);
    return {
      ...r,
      leg: summary.legs.find((l) => l.key === KEY)!,
      card: record.cards.find((c) => c.workItemKey === KEY)!,
      runStatus: record.status,
      requests: [...mock.requests],
      branchCommits,
      ranAs,
      log: readLog(join(home, 'svc-state', 'runs', summary.runId, 'logs', `${KEY}.log`)),
    };
  } finally {
    if (server.child.exitCode === null) await server.stop();
  }
}

function readLog(path: string): string {
  return existsSync(path) ? readFileSync(path, 'utf8') : '';
}

function parseJson<T>(text: string, r: { code: number | null; stderr: string }): T {
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new Error(`svc printed no JSON (exit ${r.code}): ${r.stderr}\n${text}`);
  }
}

function svc(args: string[], env: CliEnv) {
  const argv = [process.execPath, BIN, ...args];
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((done) => {
    const child = spawn(argv[0]!, argv.slice(1), { env, stdio: ['ignore', 'pipe', 'pipe'], timeout: 300_000 });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}
