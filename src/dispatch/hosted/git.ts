// git for a hosted run: the run's repositories are cloned over HTTPS with plain URLs (no token in
// them) and every git process finds its credential through `svc git-credential`, registered after
// a blank `credential.helper` entry (which drops helpers inherited from system or user config)
// with `credential.useHttpPath` (so the helper learns which repository is asked for).
//
// simple-git refuses `credential.helper` (and `core.askPass`) in `-c` options unless its unsafe
// flags allow them, and `.env()` replaces the whole environment and refuses variables such as
// EDITOR, PAGER or GIT_ASKPASS: the environment is therefore built from an allowlist on purpose.
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { simpleGit, type SimpleGit } from 'simple-git';
import type { WorkItemDetail } from '../../contract/types.js';
import type { GitCredentialBroker } from './broker.js';
import { CREDENTIAL_SOCKET_ENV } from './credential-socket.js';

/** Variables git may inherit: locale, home, temp, proxies and CA bundles of the container. */
const PASSED = [
  'PATH', 'HOME', 'USER', 'LOGNAME', 'LANG', 'LANGUAGE', 'LC_ALL', 'LC_CTYPE', 'LC_MESSAGES', 'TMPDIR', 'TZ',
  'HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY', 'http_proxy', 'https_proxy', 'no_proxy',
  'SSL_CERT_FILE', 'SSL_CERT_DIR', 'GIT_SSL_CAINFO', 'GIT_SSL_CAPATH',
  'GIT_AUTHOR_NAME', 'GIT_AUTHOR_EMAIL', 'GIT_COMMITTER_NAME', 'GIT_COMMITTER_EMAIL',
];

const GUARDED_BUT_SAFE = new Set([...PASSED.filter((k) => k.startsWith('GIT_')), 'GIT_TERMINAL_PROMPT']);

/**
 * The complete environment of a hosted run's git processes: the allowlist above from `base`,
 * GIT_TERMINAL_PROMPT=0 (git fails instead of prompting), and the broker's socket. Never
 * SVC_TOKEN, SVC_RUN_TOKEN, GIT_ASKPASS or any other credential.
 */
export function gitEnv(base: Record<string, string | undefined>, socketPath?: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of PASSED) {
    const v = base[name];
    if (typeof v === 'string') env[name] = v;
  }
  env.GIT_TERMINAL_PROMPT = '0';
  if (socketPath) env[CREDENTIAL_SOCKET_ENV] = socketPath;
  return env;
}

/** `credential.helper` value: `!` plus a shell-quoted command; git appends the action. */
export function helperCommand(argv: readonly string[]): string {
  return `!${argv.map((a) => (/^[A-Za-z0-9_./:=@+-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(' ')}`;
}

/**
 * The configuration entries, in order: a blank helper (drops inherited ones), ours, the URL path
 * for the helper, and a blank askPass (an askPass from the user's config would otherwise prompt).
 */
export function credentialConfig(helperArgv: readonly string[]): Array<[string, string]> {
  return [
    ['credential.helper', ''],
    ['credential.helper', helperCommand(helperArgv)],
    ['credential.useHttpPath', 'true'],
    ['core.askPass', ''],
  ];
}

export interface HostedGitOptions {
  /** From gitEnv(): the only environment git gets. */
  env: Record<string, string>;
  /** How git starts the helper, e.g. `[node, bin/svc.js, 'git-credential']`. */
  helperArgv: readonly string[];
}

/** A simple-git instance for a hosted run: our helper in `-c`, the filtered environment. */
export function hostedGit(baseDir: string, opts: HostedGitOptions): SimpleGit {
  return simpleGit({
    baseDir,
    trimmed: true,
    config: credentialConfig(opts.helperArgv).map(([k, v]) => `${k}=${v}`),
    unsafe: { allowUnsafeCredentialHelper: true, allowUnsafeAskPass: true },
    // simple-git guards every GIT_* variable: the harmless ones gitEnv() passes are named here,
    // anything else (GIT_ASKPASS, GIT_SSH_COMMAND, GIT_CONFIG_*) still makes the call fail.
    allowEnvironment: Object.keys(opts.env).filter((k) => GUARDED_BUT_SAFE.has(k)),
  }).env(opts.env);
}

/** Writes the helper into a clone's `.git/config`, so git run there later (the agent) finds it. */
export async function configureRepository(repoDir: string, opts: HostedGitOptions): Promise<void> {
  const git = hostedGit(repoDir, opts);
  await git.raw(['config', '--local', '--unset-all', 'credential.helper']).catch(() => undefined);
  for (const [key, value] of credentialConfig(opts.helperArgv)) {
    await git.raw(['config', '--local', '--add', key, value]);
  }
}

/**
 * `owner/name` of a target-repository entry. The contract leaves the entry's shape open: the local
 * service sends `{ref: 'owner/name', name: 'name'}`; a bare string is taken as it is; of `ref` and
 * `name`, the one that looks like `owner/name` wins.
 */
function repositoryOfEntry(entry: unknown): unknown {
  if (typeof entry === 'string' || !entry || typeof entry !== 'object') return entry;
  const { ref, name } = entry as { ref?: unknown; name?: unknown };
  const candidates = [ref, name].filter((v): v is string => typeof v === 'string' && v.length > 0);
  return candidates.find((v) => v.includes('/')) ?? candidates[0];
}

/** The repositories a card names (`targetRepositories`, `targetRepos`, `targetRepo`), in that order. */
export function targetRepositoriesOf(item: Pick<WorkItemDetail, 'targetRepositories' | 'targetRepos' | 'targetRepo'>): string[] {
  const names: unknown[] = [
    ...(Array.isArray(item.targetRepositories) ? item.targetRepositories.map(repositoryOfEntry) : []),
    ...(Array.isArray(item.targetRepos) ? item.targetRepos : []),
    item.targetRepo,
  ];
  const out: string[] = [];
  for (const n of names) if (typeof n === 'string' && n.trim() && !out.includes(n.trim())) out.push(n.trim());
  return out;
}

export interface HostedRepository {
  /** `owner/name`. */
  repository: string;
  /** The clone inside the workspace. */
  dir: string;
  /** False when the clone was already there. */
  cloned: boolean;
}

export interface PrepareHostedRepositoriesOptions extends HostedGitOptions {
  /** The cards' work items; their target repositories are what gets cloned. */
  items: ReadonlyArray<Pick<WorkItemDetail, 'targetRepositories' | 'targetRepos' | 'targetRepo'>>;
  workspaceDir: string;
  broker: GitCredentialBroker;
}

/** Where `owner/name` is cloned: `<workspace>/<owner>/<name>`. */
export const cloneDirOf = (workspaceDir: string, repository: string): string => join(workspaceDir, ...repository.split('/'));

/**
 * Clones each target repository not yet in the workspace (the URL is the credential entry's, which
 * carries no token) and writes the helper into every clone's config.
 */
export async function prepareHostedRepositories(opts: PrepareHostedRepositoriesOptions): Promise<HostedRepository[]> {
  const wanted = [...new Set(opts.items.flatMap(targetRepositoriesOf))];
  const out: HostedRepository[] = [];
  for (const repository of wanted) {
    const dir = cloneDirOf(opts.workspaceDir, repository);
    let cloned = false;
    if (!existsSync(join(dir, '.git'))) {
      const { url } = await opts.broker.credentialFor(repository);
      assertNoSecretInUrl(url);
      await mkdir(dirname(dir), { recursive: true });
      await withAuthRetry(opts.broker, repository, () => hostedGit(opts.workspaceDir, opts).raw(['clone', '--quiet', '--', url, dir]));
      cloned = true;
    }
    await configureRepository(dir, opts);
    out.push({ repository, dir, cloned });
  }
  return out;
}

export interface PushOptions extends HostedGitOptions {
  broker: GitCredentialBroker;
  /** `owner/name` of the clone, so an authentication failure drops that repository's token. */
  repository: string;
  remote?: string;
}

/** Pushes `branch` to the same name on the remote (an implemented leg, `--push`). */
export async function pushBranch(repoDir: string, branch: string, opts: PushOptions): Promise<void> {
  const ref = `refs/heads/${branch}`;
  await withAuthRetry(opts.broker, opts.repository, () => hostedGit(repoDir, opts).raw(['push', '--quiet', opts.remote ?? 'origin', `${ref}:${ref}`]));
}

/** A git failure that means "the server refused the credential" (a 401), as git words it. */
export function isAuthFailure(err: unknown): boolean {
  const text = err instanceof Error ? err.message : String(err);
  return /Authentication failed|could not read (Username|Password)|terminal prompts disabled|\b401\b/i.test(text);
}

/**
 * Runs a networked git call; on an authentication failure (the token was revoked or expired
 * between the broker's check and the server's), drops the repository's token and tries once more.
 * git's own `erase` usually dropped it already; this covers a helper that could not reach us.
 */
async function withAuthRetry<T>(broker: GitCredentialBroker, repository: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (!isAuthFailure(err)) throw err;
    broker.invalidateRepository(repository);
    return fn();
  }
}

/** The credential entry's URL is used as is; one that embeds a user or password is refused. */
function assertNoSecretInUrl(url: string): void {
  const parsed = new URL(url);
  if (parsed.username || parsed.password) throw new Error('a git credential URL with embedded credentials was refused');
}
