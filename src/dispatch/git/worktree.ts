// One git worktree per card, on branch `svc/<KEY>` (docs/agents.md). Default home:
// `<git common dir>/svc-worktrees/<KEY>` — local to the repository and removed with it, never
// listed by the main checkout's `git status`, and outside every glob its tests and linters use.
// Creation is serialized in-process: parallel `git worktree add` calls race on config.lock and
// on the worktree registry. Existing work is sacred: an existing branch is checked out as it is
// (never reset), and pruning never removes a worktree with uncommitted changes.
import { existsSync } from 'node:fs';
import { chmod, mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { readHead } from './refs.js';
import type { PreparedWorktree } from '../ports.js';
import { Slots } from '../slots.js';
import { BRANCH_PREFIX, WorktreeError, branchFor, git, gitRun, repoPaths } from './run-git.js';

/** The in-process mutex around worktree changes: each runs after every earlier one has settled. */
const worktreeChanges = new Slots(1);

/**
 * Runs a git command that checks something out. git runs the user's post-checkout hook once the
 * checkout is made and passes the hook's exit status on as its own; svc's checkouts run
 * unattended, so a failing hook (it has run, with whatever it did) does not undo one that
 * `madeIt()` finds done. Any other failure is rethrown.
 */
export async function checkOut(run: () => Promise<unknown>, madeIt: () => boolean | Promise<boolean>): Promise<void> {
  try {
    await run();
  } catch (error) {
    if (!(await madeIt())) throw error;
  }
}

/**
 * The arguments of a commit svc makes itself, unattended, under its own name: not signed with the
 * user's key (a signer that asks for a passphrase would stop the run) and without the user's hooks.
 */
export const ownCommitArgs = (name: string, email: string, message: string): string[] => [
  '-c',
  `user.name=${name}`,
  '-c',
  `user.email=${email}`,
  '-c',
  'commit.gpgsign=false',
  'commit',
  '--quiet',
  '--no-verify',
  '-m',
  message,
];

/** Whether the checkout at `dir` is on `branch` (asked of git: only after a checkout failed). */
export async function onBranch(dir: string, branch: string): Promise<boolean> {
  return (
    (await git(dir)
      .raw(['rev-parse', '--abbrev-ref', 'HEAD'])
      .catch(() => '')) === branch
  );
}

const madeRoots = new Set<string>();

/**
 * Makes the worktrees folder once per process (git makes a missing parent itself anyway), svc's
 * alone (0700): an agent user can read an open repository, and must not read another card's
 * worktree (its uncommitted work) through it (docs/trust.md).
 */
async function makeRoot(root: string): Promise<void> {
  if (madeRoots.has(root)) return;
  await mkdir(root, { recursive: true, mode: 0o700 });
  await chmod(root, 0o700);
  madeRoots.add(root);
}

/** `<git common dir>/svc-worktrees`: the default root for a repository's card worktrees (repoPaths asks git once per repository). */
export async function defaultWorktreeRoot(repo: string): Promise<string> {
  return join((await repoPaths(repo)).common, 'svc-worktrees');
}

/** The commit each revision names, or null where it names none: one git process for all of them. */
async function commitsOf(repo: string, revisions: string[]): Promise<(string | null)[]> {
  const stdout = (await gitRun(repo, ['cat-file', '--batch-check=%(objectname)'], revisions.map((r) => `${r}^{commit}`).join('\n') + '\n')).trim();
  return stdout.split('\n').map((line) => (/^[0-9a-f]{40,64}$/.test(line) ? line : null));
}

interface WorktreeEntry {
  path: string;
  head: string | null;
  branch: string | null;
  locked: boolean;
  prunable: boolean;
}

async function listWorktrees(repo: string): Promise<WorktreeEntry[]> {
  const out = await git(repo).raw(['worktree', 'list', '--porcelain']);
  const entries: WorktreeEntry[] = [];
  for (const block of out.split(/\n\s*\n/)) {
    const lines = block.split('\n').filter(Boolean);
    const path = lines.find((l) => l.startsWith('worktree '))?.slice('worktree '.length);
    if (!path) continue;
    const branchRef = lines.find((l) => l.startsWith('branch '))?.slice('branch '.length) ?? null;
    entries.push({
      path,
      head: lines.find((l) => l.startsWith('HEAD '))?.slice('HEAD '.length) ?? null,
      branch: branchRef?.startsWith('refs/heads/') ? branchRef.slice('refs/heads/'.length) : branchRef,
      locked: lines.some((l) => l === 'locked' || l.startsWith('locked ')),
      prunable: lines.some((l) => l === 'prunable' || l.startsWith('prunable ')),
    });
  }
  return entries;
}

async function branchExists(repo: string, branch: string): Promise<boolean> {
  // for-each-ref answers every case with exit 0; a missing branch is simply no line.
  const out = await git(repo).raw(['for-each-ref', '--format=%(refname)', `refs/heads/${branch}`]);
  return out.split('\n').includes(`refs/heads/${branch}`);
}

async function headOf(path: string): Promise<string> {
  return git(path).revparse(['HEAD']);
}

export interface PrepareOptions {
  repo: string;
  key: string;
  /** Where a new branch starts; default: the repository's current HEAD. Ignored for an existing branch. */
  baseRef?: string;
  /** The worktrees folder; default `defaultWorktreeRoot(repo)`. */
  root?: string;
}

/**
 * The card's worktree, ready for an agent: an existing worktree of `svc/<KEY>` is reused; an
 * existing branch gets a new worktree as it stands; otherwise the branch is created from baseRef.
 */
export function prepareWorktree(opts: PrepareOptions): Promise<PreparedWorktree> {
  const branch = branchFor(opts.key);
  return worktreeChanges.run(async () => {
    const root = opts.root ?? (await defaultWorktreeRoot(opts.repo));
    const path = join(root, opts.key);
    const base = opts.baseRef ?? 'HEAD';
    // A new card (the common case) costs the `worktree add` alone: `-b` refuses an existing branch
    // (or a base that names no commit) before it creates anything, and only then is git asked
    // which it was. A branch that does not exist yet cannot be checked out in any worktree.
    await makeRoot(root);
    // Made by this add, not found there: a folder already at `path` is an existing worktree's.
    const made = existsSync(path) ? () => false : () => existsSync(path) && onBranch(path, branch);
    let added: unknown = null;
    try {
      await checkOut(() => git(opts.repo).raw(['worktree', 'add', '-b', branch, path, base]), made);
    } catch (error) {
      added = error;
    }
    if (added === null) return { path, branch, created: true, headBefore: readHead(path) ?? (await headOf(path)) };
    const [branchHead, baseHead] = await commitsOf(opts.repo, [`refs/heads/${branch}`, base]);
    if (!branchHead) {
      if (!baseHead) throw new WorktreeError(`cannot start ${branch}: '${base}' names no commit in ${opts.repo}`);
      throw added;
    }
    let existing = (await listWorktrees(opts.repo)).find((w) => w.branch === branch);
    if (existing && (existing.prunable || !existsSync(existing.path))) {
      // Its folder was deleted by hand: forget the stale registration, keep the branch.
      await git(opts.repo).raw(['worktree', 'prune']);
      existing = undefined;
    }
    if (existing) return { path: existing.path, branch, created: false, headBefore: await headOf(existing.path) };
    await checkOut(() => git(opts.repo).raw(['worktree', 'add', path, branch]), made);
    return { path, branch, created: true, headBefore: branchHead };
  });
}

/**
 * `--no-worktree`: check out `svc/<KEY>` in the repository itself. Refused when the tree has
 * uncommitted changes, which a checkout would carry over or lose.
 */
export function checkoutInPlace(opts: { repo: string; key: string; baseRef?: string }): Promise<PreparedWorktree> {
  const branch = branchFor(opts.key);
  return worktreeChanges.run(async () => {
    if (await isDirty(opts.repo)) {
      throw new WorktreeError(
        `cannot check out ${branch} in ${opts.repo}: the working tree has uncommitted changes; commit or stash them, or run without --no-worktree`,
      );
    }
    const g = git(opts.repo);
    const current = await g.raw(['rev-parse', '--abbrev-ref', 'HEAD']);
    if (current !== branch) {
      const made = () => onBranch(opts.repo, branch);
      if (await branchExists(opts.repo, branch)) await checkOut(() => g.raw(['checkout', branch]), made);
      else await checkOut(() => g.raw(['checkout', '-b', branch, opts.baseRef ?? 'HEAD']), made);
    }
    return { path: opts.repo, branch, created: current !== branch, headBefore: await headOf(opts.repo) };
  });
}

/** The commit a run starts its legs from, and the branch of the user's checkout it was the tip of. */
export interface RunBase {
  sha: string;
  /** null for a detached HEAD. */
  branch: string | null;
}

/** HEAD's commit and what `git rev-parse --abbrev-ref HEAD` names it (`HEAD` when detached). */
export interface RepoHead {
  sha: string;
  name: string;
}

/**
 * The base a run opens with (docs/workflow.md, "The base commit"): the tip of the branch the
 * checkout is on. A `svc/` branch is an agent's work, never the base: rules read from it would be
 * rules an agent wrote, so the run is refused until the checkout is back on the user's branch.
 */
export async function resolveBase(repo: string, head?: RepoHead | null): Promise<RunBase> {
  const g = git(repo);
  const [sha, name] = head
    ? [head.sha, head.name]
    : await Promise.all([g.revparse(['--verify', 'HEAD^{commit}']), g.raw(['rev-parse', '--abbrev-ref', 'HEAD'])]);
  const branch = name === 'HEAD' ? null : name;
  if (branch?.startsWith(BRANCH_PREFIX)) {
    throw new WorktreeError(
      `${repo} is on ${branch}, a branch svc gives an agent: its rules and files are the agent's, not yours; switch back to your branch (git switch <branch>) and run again`,
    );
  }
  return { sha, branch };
}

/**
 * After a run in place: the checkout goes back on the base's branch (or its commit, detached),
 * whatever the agent left it on. Returns null, or the line that says why it could not.
 */
export function restoreCheckout(repo: string, base: RunBase): Promise<string | null> {
  return worktreeChanges.run(async () => {
    const g = git(repo);
    const now = await g.raw(['rev-parse', '--abbrev-ref', 'HEAD']).catch(() => '');
    if (base.branch ? now === base.branch : now === 'HEAD' && (await g.revparse(['HEAD']).catch(() => '')) === base.sha) return null;
    const target = base.branch ?? base.sha;
    try {
      await g.raw(base.branch ? ['checkout', '--quiet', base.branch] : ['checkout', '--quiet', '--detach', base.sha]);
      return null;
    } catch (error) {
      const why = ((error as Error).message.split('\n').find((l) => /^(error|fatal):/.test(l)) ?? (error as Error).message.split('\n')[0] ?? '').trim();
      return `${repo} stays on ${now || 'its branch'}: git could not switch back to ${target} (${why}); run git switch ${target} there`;
    }
  });
}

/** The commit checked out at `path`, or null where there is none. */
export async function headCommit(path: string): Promise<string | null> {
  return readHead(path) ?? (await headOf(path).catch(() => null));
}

/**
 * Without an agent user: the branch goes back to `checked`, the commit the leg's check ran on, when
 * something moved it after the check. What moved it stays readable on `refs/svc/after-check/<KEY>`
 * and its files as uncommitted changes (nothing is lost, nothing reaches the branch). Returns the
 * commit the branch had moved to, or null.
 */
export async function pinToChecked(path: string, key: string, checked: string): Promise<string | null> {
  const now = await headCommit(path);
  if (!now || now === checked) return null;
  const g = git(path);
  await g.raw(['update-ref', `refs/svc/after-check/${key}`, now]);
  await g.raw(['reset', '--quiet', '--soft', checked]);
  return now;
}

/** Uncommitted changes, untracked files included (ignored files are not work). */
export async function isDirty(path: string): Promise<boolean> {
  const out = await git(path).raw(['status', '--porcelain', '--untracked-files=normal']);
  return out.length > 0;
}

/**
 * Puts a worktree's uncommitted changes (untracked files included) on git's stash, under svc's own
 * name, and leaves the tree clean. For what a failed leg left behind: an agent in a clone of its
 * own never saw it, and bringing its work back over it would fail (`would be overwritten`).
 */
export async function stashLeftovers(path: string, message: string): Promise<void> {
  await git(path).raw(['-c', 'user.name=svc', '-c', 'user.email=svc@localhost', 'stash', 'push', '--quiet', '--include-untracked', '-m', message]);
}

export interface PruneResult {
  removed: Array<{ key: string; path: string }>;
  kept: Array<{ key: string; path: string; reason: string }>;
}

/**
 * Remove the clean card worktrees (all, or those of `finishedKeys`). A worktree with uncommitted
 * work, a locked one, or one that cannot be inspected is kept and reported with the reason. The
 * branches stay: their commits are the agents' work.
 */
export function pruneWorktrees(opts: {
  repo: string;
  finishedKeys?: readonly string[];
  /** Cards of runs live on this machine, with why: their worktrees are an agent's workplace. */
  inUse?: ReadonlyMap<string, string>;
}): Promise<PruneResult> {
  return worktreeChanges.run(async () => {
    const result: PruneResult = { removed: [], kept: [] };
    await git(opts.repo).raw(['worktree', 'prune']);
    const wanted = opts.finishedKeys ? new Set(opts.finishedKeys) : null;
    const main = resolve(opts.repo);
    for (const w of await listWorktrees(opts.repo)) {
      if (!w.branch?.startsWith(BRANCH_PREFIX) || resolve(w.path) === main) continue;
      const key = w.branch.slice(BRANCH_PREFIX.length);
      // A best-of-N attempt's worktree (svc/<KEY>-attempt-<n>) belongs to its card.
      const card = key.replace(/-attempt-\d+$/, '');
      if (wanted && !wanted.has(card)) continue;
      const live = opts.inUse?.get(card);
      if (live) {
        result.kept.push({ key, path: w.path, reason: live });
        continue;
      }
      if (w.locked) {
        result.kept.push({ key, path: w.path, reason: 'locked' });
        continue;
      }
      try {
        if (await isDirty(w.path)) {
          result.kept.push({ key, path: w.path, reason: 'uncommitted changes' });
          continue;
        }
        // No --force: git itself refuses a dirty tree too, should it have changed since the check.
        await git(opts.repo).raw(['worktree', 'remove', w.path]);
        result.removed.push({ key, path: w.path });
      } catch (error) {
        result.kept.push({ key, path: w.path, reason: `could not be removed: ${(error as Error).message.split('\n')[0]}` });
      }
    }
    return result;
  });
}
