// The bare repositories behind the local git remote: `<gitRoot>/<owner>/<name>.git`. A repository
// name is `owner/name` as the work items' target repositories spell it; anything else (a `..`, an
// absolute path, a third segment) is refused before it can reach the file system or git.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

const SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,99}$/;

/** `owner/name` when both segments are plain names (no dot-only segment, no `.git` suffix). */
export function parseRepositoryName(name: string): { owner: string; repo: string } | null {
  const parts = name.split('/');
  if (parts.length !== 2) return null;
  const [owner, repo] = parts as [string, string];
  if (!SEGMENT.test(owner) || !SEGMENT.test(repo) || repo.endsWith('.git')) return null;
  return { owner, repo };
}

/** Where a repository lives under the git root (it may not exist yet). */
export function repositoryPath(gitRoot: string, name: string): string {
  const parsed = parseRepositoryName(name);
  if (!parsed) throw new Error(`not a repository name (owner/name): ${JSON.stringify(name)}`);
  return join(gitRoot, parsed.owner, `${parsed.repo}.git`);
}

/**
 * The environment of every git process the service runs: no user or system config (a developer's
 * `~/.gitconfig` must not change what the remote does), a fixed identity for seed commits.
 */
export function serviceGitEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    GIT_AUTHOR_NAME: 'svc server',
    GIT_AUTHOR_EMAIL: 'server@svc.invalid',
    GIT_COMMITTER_NAME: 'svc server',
    GIT_COMMITTER_EMAIL: 'server@svc.invalid',
    ...extra,
  };
}

export interface CreateRepositoryOptions {
  /** Put one commit (a README) on `main`, so a clone has something to branch from. */
  seedCommit?: boolean;
}

/**
 * Admin helper: creates the bare repository `owner/name` under `gitRoot` (HEAD on `main`), and
 * optionally one seed commit. Returns its path. An existing repository is left as it is.
 */
export async function createRepository(gitRoot: string, name: string, opts: CreateRepositoryOptions = {}): Promise<string> {
  const path = repositoryPath(gitRoot, name);
  if (existsSync(join(path, 'HEAD'))) return path;
  await mkdir(path, { recursive: true });
  const env = serviceGitEnv();
  const git = (args: string[], input?: string): Promise<string> => {
    const child = run('git', args, { cwd: path, env });
    // git may exit before reading its input (it needs none for most commands): no EPIPE crash.
    child.child.stdin?.on('error', () => undefined);
    child.child.stdin?.end(input ?? '');
    return child.then((r) => r.stdout.trim());
  };
  await git(['init', '--quiet', '--bare', '--initial-branch=main']);
  if (opts.seedCommit) {
    // Plumbing only: a bare repository has no work tree to commit from.
    const blob = await git(['hash-object', '-w', '--stdin'], `# ${name}\n`);
    const tree = await git(['mktree'], `100644 blob ${blob}\tREADME.md\n`);
    const commit = await git(['commit-tree', tree, '-m', 'Initial commit']);
    await git(['update-ref', 'refs/heads/main', commit]);
  }
  return path;
}
