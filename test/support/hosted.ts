// Shared setup of the hosted-run tests: a local service with a git root, a hosted run over cards
// that name repositories in it, the run's own credential, and the credential helper bundled from
// source (fixtures/helper-entry.ts) so git can start it as a separate process.
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { mintRunCredential } from '../../src/server/dispatch-runs/index.js';
import { createRepository, repositoryPath } from '../../src/server/git/index.js';
import type { ServiceConfig } from '../../src/server/kernel.js';
export { filesUnder } from './files.js';
import { startTestService, type TestService } from './service.js';

const exec = promisify(execFile);

export interface HostedFixture {
  svc: TestService;
  gitRoot: string;
  /** The test's own folders: home (config, state), the workspace, the helper's log. */
  home: string;
  workspaceDir: string;
  argvLog: string;
  helperArgv: string[];
  runId: string;
  runToken: string;
  keys: string[];
  /** The environment the platform would start svc with. */
  env: Record<string, string>;
}

// Bundled once per test file (esbuild is the slow part), written per test with its own log path.
const LOG_PLACEHOLDER = '@@SVC_ARGV_LOG@@';
let bundled: Promise<string> | undefined;

export async function bundleHelper(dir: string, argvLog: string): Promise<string[]> {
  bundled ??= build({
    entryPoints: [resolve(import.meta.dirname, '../fixtures/hosted/helper-entry.ts')],
    write: false,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node22',
    packages: 'external',
    logLevel: 'warning',
    define: { __ARGV_LOG__: JSON.stringify(LOG_PLACEHOLDER) },
  }).then((r) => r.outputFiles[0]!.text);
  const code = await bundled;
  if (!code.includes(JSON.stringify(LOG_PLACEHOLDER))) throw new Error('the bundled credential helper lost its log path placeholder');
  const outfile = join(dir, 'git-credential.mjs');
  writeFileSync(outfile, code.replaceAll(JSON.stringify(LOG_PLACEHOLDER), JSON.stringify(argvLog)));
  return [process.execPath, outfile];
}

export interface FixtureOptions {
  config?: Partial<ServiceConfig>;
  /** Work items to open the run over, each naming its repositories. */
  items?: Array<{ title: string; targetRepositories?: string[]; targetRepo?: string; targetRepos?: string[] }>;
  /** The service's clock (default the real one). */
  now?: () => Date;
}

export async function hostedFixture(opts: FixtureOptions = {}): Promise<HostedFixture> {
  const root = mkdtempSync(join(tmpdir(), 'svc-hosted-'));
  const gitRoot = join(root, 'git-root');
  const home = join(root, 'home');
  const workspaceDir = join(root, 'work');
  const argvLog = join(root, 'helper-argv.jsonl');
  const svc = await startTestService({ config: { gitRoot, ...opts.config }, ...(opts.now ? { now: opts.now } : {}) });
  const items = opts.items ?? [{ title: 'Add a widget', targetRepositories: ['acme/widgets'] }];
  const repos = new Set(items.flatMap((i) => [...(i.targetRepositories ?? []), ...(i.targetRepos ?? []), ...(i.targetRepo ? [i.targetRepo] : [])]));
  for (const r of repos) await createRepository(gitRoot, r, { seedCommit: true });
  const keys = items.map((i) => svc.admin.createWorkItem({ projectKey: svc.projectKey, kind: 'task', type: 'code', ...i }).key);
  const opened = await svc.call('POST', '/dispatch-runs', {
    body: { projectKey: svc.projectKey, command: 'run', origin: 'hosted', cards: keys.map((workItemKey) => ({ workItemKey })) },
  });
  if (opened.status !== 201) throw new Error(`open failed: ${opened.status} ${JSON.stringify(opened.body)}`);
  const runId = opened.body.run.id as string;
  const runToken = mintRunCredential(svc.db, runId);
  const helperArgv = await bundleHelper(root, argvLog);
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    LANG: 'C.UTF-8',
    SVC_CONFIG_DIR: join(home, 'config'),
    SVC_STATE_DIR: join(home, 'state'),
    SVC_BASE_URL: svc.url,
    SVC_RUN_ID: runId,
    SVC_RUN_TOKEN: runToken,
    // Set on purpose: it must never reach git (gitEnv allowlist), and simple-git would refuse it.
    EDITOR: 'vi',
    PAGER: 'less',
  };
  return { svc, gitRoot, home, workspaceDir, argvLog, helperArgv, runId, runToken, keys, env };
}

/** Plain git, as an agent would run it: an identity, no credentials, no helper of ours. */
export async function git(cwd: string, ...args: string[]): Promise<string> {
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: cwd,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_TERMINAL_PROMPT: '0',
    GIT_AUTHOR_NAME: 'Fake Agent',
    GIT_AUTHOR_EMAIL: 'agent@example.invalid',
    GIT_COMMITTER_NAME: 'Fake Agent',
    GIT_COMMITTER_EMAIL: 'agent@example.invalid',
  };
  return (await exec('git', args, { cwd, env })).stdout.trim();
}

/** The commit a ref names in the service's bare repository, or null when it names none. */
export function bareRef(f: HostedFixture, repository: string, ref: string): Promise<string | null> {
  return git(repositoryPath(f.gitRoot, repository), 'rev-parse', '--verify', '--quiet', ref).catch(() => null);
}

/** Where any of `secrets` appears in `text`; empty when none. */
export function leaks(text: string, secrets: readonly string[]): string[] {
  return secrets.filter((s) => s.length > 0 && text.includes(s));
}
