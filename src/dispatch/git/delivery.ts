// The git side of `fix`, `review` and `--push`: fetch a delivery's head from `origin`, base a
// worktree on it, keep what a review agent changed on a side branch, push a branch with the user's
// own git credentials. Existing work is never reset: a local branch that diverged from the pull
// request's head stops the leg with a reason instead.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Delivery, WorkItemDetail } from '../../contract/types.js';
import type { PreparedWorktree } from '../ports.js';
import { commandFailed, run } from '../process/run.js';
import { readHead } from './refs.js';
import { commitsSince } from './changes.js';
import { branchFor, WorktreeError } from './run-git.js';
import { checkOut, defaultWorktreeRoot, isDirty, onBranch, ownCommitArgs, prepareWorktree } from './worktree.js';

const REMOTE = 'origin';

/** A git that failed: its output, for the one line a reason shows. */
class GitFailed extends Error {
  constructor(
    message: string,
    readonly stdout: string,
    readonly stderr: string,
  ) {
    super(message);
  }
}

/**
 * git through process/run.ts with stdin closed (not execa: its per-call set-up costs a few ms of
 * CPU, and `--push` runs this once per card); no timeout, a push takes what the network takes.
 * `env` is added to svc's own environment. Rejects with a GitFailed carrying git's output.
 */
async function git(dir: string, args: string[], env?: NodeJS.ProcessEnv): Promise<string> {
  const r = await run('git', args, { cwd: dir, maxBuffer: 16 << 20, timeoutMs: 0, ...(env ? { env: { ...process.env, ...env } } : {}) });
  if (r.code === 0) return r.stdout.trim();
  const why = r.stderr.trim() || commandFailed('git', args, r).message;
  throw new GitFailed(`git ${args[0]} failed in ${dir}: ${why}`, r.stdout, r.stderr);
}

async function isAncestor(repo: string, older: string, newer: string): Promise<boolean> {
  return git(repo, ['merge-base', '--is-ancestor', older, newer]).then(
    () => true,
    () => false,
  );
}

/** The delivery a fix (open, ci failing) or a review (open) works on; null when the card has none. */
export function deliveryFor(item: WorkItemDetail, mode: 'fix' | 'review'): Delivery | null {
  const open = item.deliveries.filter((d) => d.state === 'open');
  return (mode === 'fix' ? open.find((d) => d.ci === 'failing') : open[0]) ?? null;
}

function hostOf(url: string): string | null {
  // scp-like ssh remotes (git@github.com:o/n.git) have no scheme.
  const scp = /^[^@/]+@([^:/]+):/.exec(url);
  if (scp) return scp[1]!.toLowerCase();
  try {
    return new URL(url).hostname.toLowerCase() || null;
  } catch {
    return null;
  }
}

/**
 * The ref on `origin` holding the delivery's head. A GitHub-style remote (the delivery's URL is
 * `…/pull/<number>` on the same host as `origin`) serves `refs/pull/<number>/head`; any other
 * remote is expected to hold the branch svc pushed, `svc/<KEY>`.
 */
export function headRefOf(delivery: Delivery, key: string, originUrl: string | null): string {
  const pull = /\/pull\/(\d+)(?:[/?#]|$)/.exec(delivery.url);
  const sameHost = originUrl && hostOf(originUrl) !== null && hostOf(originUrl) === hostOf(delivery.url);
  if (pull && sameHost) return `refs/pull/${pull[1]}/head`;
  return `refs/heads/${branchFor(key)}`;
}

export interface FetchedHead {
  /** The ref fetched on origin. */
  ref: string;
  sha: string;
}

/** Fetches the delivery's head from origin into `refs/svc/heads/<KEY>`; throws a one-line reason. */
export async function fetchDeliveryHead(repo: string, item: WorkItemDetail, mode: 'fix' | 'review'): Promise<FetchedHead> {
  const delivery = deliveryFor(item, mode);
  if (!delivery) throw new WorktreeError(`${item.key} has no ${mode === 'fix' ? 'open delivery with ci: failing' : 'open delivery'}`);
  const originUrl = await git(repo, ['remote', 'get-url', REMOTE]).catch(() => null);
  if (originUrl === null) throw new WorktreeError(`cannot fetch the pull request head of ${item.key}: the repository has no '${REMOTE}' remote`);
  const ref = headRefOf(delivery, item.key, originUrl);
  const local = `refs/svc/heads/${item.key}`;
  try {
    await git(repo, ['fetch', '--quiet', '--no-tags', REMOTE, `+${ref}:${local}`], { GIT_TERMINAL_PROMPT: '0' });
  } catch (error) {
    const why = ((error as { stderr?: string }).stderr ?? String(error)).split('\n').find((l) => l.trim()) ?? 'error';
    throw new WorktreeError(`cannot fetch ${ref} from ${REMOTE} for ${item.key}: ${why.trim()}`);
  }
  return { ref, sha: await git(repo, ['rev-parse', local]) };
}

/**
 * `fix`: the card's worktree on `svc/<KEY>` at the pull request's head. A new branch starts there;
 * an existing one behind the head is fast-forwarded; one ahead of it is used as it is; one that
 * diverged is refused (its own commits are never thrown away).
 */
export async function prepareFixWorktree(opts: { repo: string; key: string; root?: string; head: FetchedHead }): Promise<PreparedWorktree> {
  const wt = await prepareWorktree({ repo: opts.repo, key: opts.key, baseRef: opts.head.sha, ...(opts.root ? { root: opts.root } : {}) });
  return alignWithHead(wt, opts.head);
}

/** Brings a checked-out `svc/<KEY>` (a worktree, or the repository with --no-worktree) to the head. */
export async function alignWithHead(wt: PreparedWorktree, head: FetchedHead): Promise<PreparedWorktree> {
  const here = await git(wt.path, ['rev-parse', 'HEAD']);
  if (here === head.sha || (await isAncestor(wt.path, head.sha, here))) return { ...wt, headBefore: here };
  if (!(await isAncestor(wt.path, here, head.sha))) {
    throw new WorktreeError(`local ${wt.branch} and the pull request head (${head.ref}) have diverged; reconcile them by hand, then run fix again`);
  }
  if (await isDirty(wt.path)) throw new WorktreeError(`${wt.path} has uncommitted changes; cannot bring ${wt.branch} up to the pull request head`);
  await git(wt.path, ['merge', '--ff-only', '--quiet', head.sha]);
  return { ...wt, headBefore: head.sha };
}

/** The side branch that keeps what a review agent changed, for inspection. */
export function reviewBranchFor(key: string, runId: string): string {
  return `${branchFor('review')}/${key}/${runId}`;
}

/** `review`: a detached worktree at the pull request's head, one per run and card. */
export async function prepareReviewWorktree(opts: { repo: string; key: string; runId: string; root?: string; head: FetchedHead }): Promise<PreparedWorktree> {
  const root = opts.root ?? (await defaultWorktreeRoot(opts.repo));
  const path = join(root, 'review', opts.runId, opts.key);
  await mkdir(join(root, 'review', opts.runId), { recursive: true });
  await checkOut(
    () => git(opts.repo, ['worktree', 'add', '--quiet', '--detach', path, opts.head.sha]),
    () => readHead(path) === opts.head.sha,
  );
  return { path, branch: reviewBranchFor(opts.key, opts.runId), created: true, headBefore: opts.head.sha };
}

/**
 * After a review agent: null when it changed nothing (its worktree is removed), else the side
 * branch now holding its commits and its uncommitted files (committed there by svc).
 */
export async function settleReview(repo: string, wt: PreparedWorktree, key: string): Promise<string | null> {
  const commits = await commitsSince(wt.path, wt.headBefore);
  const dirty = await isDirty(wt.path);
  if (commits === 0 && !dirty) {
    await git(repo, ['worktree', 'remove', wt.path]).catch(() => undefined);
    return null;
  }
  await checkOut(
    () => git(wt.path, ['switch', '--quiet', '-c', wt.branch]),
    () => onBranch(wt.path, wt.branch),
  );
  if (dirty) {
    await git(wt.path, ['add', '-A']);
    await git(wt.path, ownCommitArgs('svc', 'svc@localhost', `${key}: files the review agent left uncommitted`));
  }
  return wt.branch;
}

/**
 * `--push` on a local run: `git push origin svc/KEY` with the user's own git configuration and
 * credentials. Never forced, so git itself refuses anything but a fast-forward.
 */
export async function pushToOrigin(repo: string, branch: string): Promise<void> {
  const ref = `refs/heads/${branch}`;
  try {
    await git(repo, ['push', '--quiet', '--porcelain', REMOTE, `${ref}:${ref}`], { GIT_TERMINAL_PROMPT: '0' });
  } catch (error) {
    const text = (error as { stderr?: string; stdout?: string }).stderr || (error as { stdout?: string }).stdout || String(error);
    const line = text
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('To ') && l !== 'Done')
      .join(' | ');
    throw new Error(`git push ${REMOTE} ${branch}: ${line || 'failed'}`);
  }
}
