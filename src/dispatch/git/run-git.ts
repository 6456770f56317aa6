// svc's own git: the branch a card's work is on, and the two ways a question goes to git (one whose
// failure is an error, one whose failure is an answer), through process/run.ts.
import { commandFailed, run } from '../process/run.js';

/** A git operation on a worktree that cannot be done safely; the message says why and what to do. */
export class WorktreeError extends Error {
  override readonly name = 'WorktreeError';
}

export const BRANCH_PREFIX = 'svc/';

export function branchFor(key: string): string {
  return `${BRANCH_PREFIX}${key}`;
}

/**
 * git through process/run.ts (node's own spawn), not simple-git (which waits a fixed 50 ms after any
 * command that prints nothing) nor execa (whose per-call set-up, signal-exit hooks and stream
 * bookkeeping cost about 5 ms of CPU per git process on the 2-core bench machine, every card). A
 * non-zero exit rejects with git's stderr in the message. `input` goes to git's stdin, which is
 * closed after it. No timeout: a worktree of a large repository may take its time.
 */
export async function gitRun(dir: string, args: string[], input?: string): Promise<string> {
  const r = await run('git', args, { cwd: dir, maxBuffer: 64 << 20, timeoutMs: 0, ...(input !== undefined ? { input } : {}) });
  if (r.code !== 0) throw commandFailed('git', args, r);
  return r.stdout;
}

/**
 * A git question whose failure is an answer (no such remote, no such key, an origin out of reach):
 * never rejects. `env` replaces the environment (default svc's own); `timeoutMs` ends a git that
 * hangs, `signal` one nobody needs any more. `missing`: there is no git to ask (not on PATH). Its
 * stdin is /dev/null.
 */
export async function gitAnswer(
  dir: string,
  args: string[],
  opts: { env?: NodeJS.ProcessEnv; timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<{ ok: boolean; stdout: string; stderr: string; missing: boolean }> {
  const r = await run('git', args, {
    cwd: dir,
    maxBuffer: 16 << 20,
    timeoutMs: opts.timeoutMs ?? 0,
    ...(opts.env ? { env: opts.env } : {}),
    ...(opts.signal ? { signal: opts.signal } : {}),
  });
  return { ok: r.code === 0, stdout: r.stdout, stderr: r.stderr, missing: r.errno === 'ENOENT' };
}

export function git(dir: string) {
  const raw = async (args: string[]): Promise<string> => (await gitRun(dir, args)).trim();
  return { raw, revparse: (args: string[]) => raw(['rev-parse', ...args]) };
}

/**
 * One answer of git per process and key (a repository, or a repository and the question), asked
 * at the first call; a failed one is asked again at the next.
 */
export function askOnce<T>(answers: Map<string, Promise<T>>, key: string, ask: () => Promise<T>): Promise<T> {
  let answer = answers.get(key);
  if (!answer) {
    answer = ask();
    answers.set(key, answer);
    answer.catch(() => answers.delete(key));
  }
  return answer;
}

const origins = new Map<string, Promise<string | null>>();

/**
 * The URL of `repo`'s origin, or null without one: asked of git once per process and repository.
 * A run's start asks it twice over (the fence's git host, selection's read of origin's branches),
 * and a fleet's worker starts with nothing else to do; origin does not move under a run.
 */
export function originUrl(repo: string): Promise<string | null> {
  return askOnce(origins, repo, () => gitAnswer(repo, ['remote', 'get-url', 'origin']).then((r) => (r.ok ? r.stdout.trim() || null : null)));
}

const withOrigin = new Map<string, Promise<boolean>>();

/**
 * Whether `repo` has an origin, all that selection asks of it (docs/dispatch.md, "Work advances"):
 * the run's config listing answers it where it names origin's URL (`listed`, said once at the
 * start), so a run that asks nothing else of origin starts no `git remote`; else originUrl asks git
 * (a remote kept in the old `.git/remotes` files, or none).
 */
export function hasOrigin(repo: string, listed?: boolean): Promise<boolean> {
  return askOnce(withOrigin, repo, () => (listed ? Promise.resolve(true) : originUrl(repo).then((url) => url !== null)));
}

/** A repository's top folder and its git common dir, both absolute. */
export interface RepoPaths {
  top: string;
  common: string;
}

const paths = new Map<string, Promise<RepoPaths>>();

/**
 * `repo`'s top folder and git common dir, asked of git once per process and repository (the
 * workflow file in the working tree, the card worktrees' root), or taken from an answer the run's
 * first rev-parse gave already (`known`).
 */
export function repoPaths(repo: string, known?: RepoPaths): Promise<RepoPaths> {
  return askOnce(paths, repo, async () => {
    if (known) return known;
    const [top, common] = (await gitRun(repo, ['rev-parse', '--path-format=absolute', '--show-toplevel', '--git-common-dir'])).split('\n');
    if (!top || !common) throw new Error(`git rev-parse gave no top folder and common dir for ${repo}`);
    return { top, common };
  });
}
