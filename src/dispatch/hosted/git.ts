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
import { dirname, join, resolve } from 'node:path';
import { simpleGit, type SimpleGit } from 'simple-git';
import { Retrier, retry } from '../../api/retry.js';
import { parseRepositoryRef, sameRepository } from '../../contract/repository-ref.js';
import type { WorkItemDetail } from '../../contract/types.js';
import type { GitCredentialBroker } from './broker.js';
import { CREDENTIAL_SOCKET_ENV } from './credential-socket.js';

/** Variables git may inherit: locale, home, temp, proxies and CA bundles of the container. */
const PASSED = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'LANG',
  'LANGUAGE',
  'LC_ALL',
  'LC_CTYPE',
  'LC_MESSAGES',
  'TMPDIR',
  'TZ',
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'NO_PROXY',
  'http_proxy',
  'https_proxy',
  'no_proxy',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'GIT_SSL_CAINFO',
  'GIT_SSL_CAPATH',
  'GIT_AUTHOR_NAME',
  'GIT_AUTHOR_EMAIL',
  'GIT_COMMITTER_NAME',
  'GIT_COMMITTER_EMAIL',
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
  /** The repository as the (first) card names it: `owner/name` or a URL. */
  repository: string;
  /** The clone inside the workspace, or the checkout that was already there. */
  dir: string;
  /** False when the clone was already there, or an existing checkout is used. */
  cloned: boolean;
  /** True when `dir` is a checkout found in place (`--repo` or the current directory), not ours. */
  existing?: boolean;
}

export interface PrepareHostedRepositoriesOptions extends HostedGitOptions {
  /** The cards' work items; their target repositories are what gets cloned. */
  items: ReadonlyArray<Pick<WorkItemDetail, 'targetRepositories' | 'targetRepos' | 'targetRepo'>>;
  workspaceDir: string;
  broker: GitCredentialBroker;
  /**
   * Folders that may already hold a checkout of a target repository (`--repo` / SVC_REPO, the
   * current directory): one whose `origin` is that repository is used instead of a clone.
   */
  checkouts?: readonly string[];
}

/** A target repository that is none of the accepted shapes: the card cannot be worked on. */
export class RepositoryRefError extends Error {
  override readonly name = 'RepositoryRefError';
}

/**
 * Where a repository is cloned: `<workspace>/<owner>/<name>`, from its path whatever the shape it
 * was named in (`https://host/acme/shop.git` and `git@host:acme/shop.git` both give `acme/shop`).
 */
export const cloneDirOf = (workspaceDir: string, repository: string): string => {
  const ref = parseRepositoryRef(repository);
  if (!ref) throw new RepositoryRefError(`target repository '${repository}' is neither owner/name nor a git URL (https://, ssh://, user@host:path)`);
  return join(workspaceDir, ...ref.path.split('/'));
};

/** The top folder of the git checkout holding `dir` when its `origin` names `repository` (or `url`). */
async function checkoutOf(dir: string, repository: string, url: string, opts: HostedGitOptions): Promise<string | null> {
  if (!existsSync(dir)) return null;
  try {
    const git = hostedGit(dir, opts);
    const top = await git.raw(['rev-parse', '--show-toplevel']);
    const origin = await git.raw(['remote', 'get-url', 'origin']);
    return origin && (sameRepository(origin, repository) || sameRepository(origin, url)) ? resolve(top) : null;
  } catch {
    return null;
  }
}

/**
 * Each target repository once (however its cards name it): an existing checkout whose `origin` is
 * that repository, else a clone in the workspace made from the credential entry's URL (which
 * carries no token, and is https whatever shape the card used: the token is for https). The
 * helper is written into each one's config.
 */
export async function prepareHostedRepositories(opts: PrepareHostedRepositoriesOptions): Promise<HostedRepository[]> {
  const wanted: string[] = [];
  for (const r of opts.items.flatMap(targetRepositoriesOf)) if (!wanted.some((w) => w === r || sameRepository(w, r))) wanted.push(r);
  const out: HostedRepository[] = [];
  for (const repository of wanted) {
    const target = cloneDirOf(opts.workspaceDir, repository);
    const { url } = await opts.broker.credentialFor(repository);
    assertNoSecretInUrl(url);
    let dir = target;
    let cloned = false;
    let existing = false;
    if (!existsSync(join(target, '.git'))) {
      for (const candidate of [...new Set(opts.checkouts ?? [])]) {
        const found = await checkoutOf(candidate, repository, url, opts);
        if (found && !out.some((o) => o.dir === found)) {
          dir = found;
          existing = true;
          break;
        }
      }
      if (!existing) {
        await mkdir(dirname(target), { recursive: true });
        await withAuthRetry(opts.broker, repository, () => hostedGit(opts.workspaceDir, opts).raw(['clone', '--quiet', '--', url, target]));
        cloned = true;
      }
    }
    await configureRepository(dir, opts);
    out.push({ repository, dir, cloned, ...(existing ? { existing } : {}) });
  }
  return out;
}

export interface PushOptions extends HostedGitOptions {
  broker: GitCredentialBroker;
  /** `owner/name` of the clone, so an authentication failure drops that repository's token. */
  repository: string;
  remote?: string;
}

/**
 * Pushes `branch` to the same name on the remote (an implemented leg, `--push`): to `origin` when
 * it is an http(s) URL (our clones, an https checkout), else to the credential entry's URL: an
 * existing checkout's origin may be an ssh or scp-like URL, which the run's token cannot serve.
 */
export async function pushBranch(repoDir: string, branch: string, opts: PushOptions): Promise<void> {
  const ref = `refs/heads/${branch}`;
  const git = hostedGit(repoDir, opts);
  let remote = opts.remote ?? 'origin';
  if (!opts.remote) {
    const origin = await git.raw(['remote', 'get-url', 'origin']).catch(() => '');
    if (!/^https?:\/\//i.test(origin)) {
      remote = (await opts.broker.credentialFor(opts.repository)).url;
      assertNoSecretInUrl(remote);
    }
  }
  await withAuthRetry(opts.broker, opts.repository, () => git.raw(['push', '--quiet', remote, `${ref}:${ref}`]));
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
function withAuthRetry<T>(broker: GitCredentialBroker, repository: string, fn: () => Promise<T>): Promise<T> {
  // No wait: a fresh token is there at once, and a second refusal is final.
  return retry(
    fn,
    (err, r) => {
      if (r.attempt > 1 || !isAuthFailure(err)) return null;
      broker.invalidateRepository(repository);
      return 0;
    },
    new Retrier({ maxWaitMs: 0, countElapsed: false }),
  );
}

/** The credential entry's URL is used as is; one that embeds a user or password is refused. */
function assertNoSecretInUrl(url: string): void {
  const parsed = new URL(url);
  if (parsed.username || parsed.password) throw new Error('a git credential URL with embedded credentials was refused');
}
