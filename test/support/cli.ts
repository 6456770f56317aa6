// Spawns the real, built `bin/svc.js`, as a user's shell would, with its own config and state
// folders so tests never touch the machine's. `npm test` builds first.
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { copyRepo } from './repo-template.js';

export const BIN = resolve(import.meta.dirname, '../../bin/svc.js');

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface CliEnv {
  [name: string]: string | undefined;
}

// One compile cache for every svc a test spawns (bin/svc.js keeps it under HOME, and each test's HOME
// is new): without it each of the suite's ~240 spawns compiled the whole bundle afresh. It is keyed by
// the source's hash, so a rebuilt dist/ never runs stale code. Kept from run to run in the clone's
// node_modules/.cache, not in the run's temp folder (test/support/run-tmp.ts), which goes at the end.
// test/package/compile-cache.test.ts checks the HOME default with an environment of its own.
const COMPILE_CACHE = resolve(import.meta.dirname, '../../node_modules/.cache/svc-test-compile-cache');

/** A fresh home for one test: config and state folders, no inherited SVC_* variables. */
export function isolatedEnv(extra: CliEnv = {}): CliEnv {
  const home = mkdtempSync(join(tmpdir(), 'svc-home-'));
  const env: CliEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('SVC_') && k !== 'CI') env[k] = v;
  return {
    ...env,
    HOME: home,
    SVC_CONFIG_DIR: join(home, 'config'),
    SVC_STATE_DIR: join(home, 'state'),
    NO_COLOR: '1',
    NODE_COMPILE_CACHE: COMPILE_CACHE,
    // Tests run as root in CI: their agents (scripts in private temp folders) keep svc's user unless
    // a test asks for the boundary (test/trust/agent-boundary.test.ts).
    SVC_AGENT_USER: 'none',
    ...extra,
  };
}

/** `bin`: another copy of svc's bin/svc.js (the agent-race test attacks a copy, never the tree's own). */
export function runCli(args: string[], opts: { env?: CliEnv; cwd?: string; input?: string; timeoutMs?: number; bin?: string } = {}): Promise<CliResult> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [opts.bin ?? BIN, ...args], {
      cwd: opts.cwd,
      env: opts.env ?? isolatedEnv(),
      stdio: ['pipe', 'pipe', 'pipe'],
      timeout: opts.timeoutMs ?? 60_000,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.stdin.end(opts.input ?? '');
    child.on('close', (code, signal) => done({ code, signal, stdout, stderr }));
  });
}

/** Runs a plain program (git, bash) and returns its stdout. */
export function run(cmd: string, args: string[], cwd?: string, env?: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((ok, fail) =>
    execFile(cmd, args, { cwd, env }, (error, stdout, stderr) =>
      error ? fail(new Error(`${cmd} ${args.join(' ')}: ${stderr || error.message}`)) : ok(stdout),
    ),
  );
}

/**
 * A git repository with one commit on main, for agents to work in: a copy of one built per worker
 * (test/support/repo-template.ts). `git init` and a commit cost three processes (with git's
 * automatic maintenance) per repository; a copy of the template's few files costs none.
 */
export function makeRepo(): Promise<string> {
  return copyRepo('plain', initRepo);
}

/**
 * A repository made by git itself (init and an empty commit on main). `--template=` leaves out
 * git's sample hooks and info/: 22 files instead of 40, which made each copy of it ~4× cheaper
 * (13 vs 54 ms in a vitest worker); a user's init.templateDir can leave a repository the same way.
 */
async function initRepo(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-repo-'));
  await run('git', ['init', '-q', '--template=', '-b', 'main'], dir);
  await run('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.invalid', 'commit', '-q', '--allow-empty', '-m', 'init'], dir);
  return dir;
}
