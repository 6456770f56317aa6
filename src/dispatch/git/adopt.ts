// The git side of best-of-N (lifecycle/attempts.ts): how big an attempt's change is (the tie-break)
// and putting the winning attempt's commit on the card's own branch without losing what was there.
import { lastLine, run, RunError } from '../process/run.js';
import { isDirty, stashLeftovers } from './worktree.js';

async function gitIn(dir: string, args: string[]): Promise<{ code: number; stdout: string }> {
  const r = await run('git', args, { cwd: dir, maxBuffer: 16 << 20, timeoutMs: 0 });
  if (r.code === null) throw new RunError(`git ${args[0]}: ${lastLine(r)}`, r);
  return { code: r.code, stdout: r.stdout.trim() };
}

async function gitOk(dir: string, args: string[]): Promise<string> {
  const r = await gitIn(dir, args);
  if (r.code !== 0) throw new Error(`git ${args[0]} failed (exit ${r.code}) in ${dir}`);
  return r.stdout;
}

/** Lines added plus lines removed from `base` to HEAD in `dir` (binary files count as one). */
export async function diffLines(dir: string, base: string): Promise<number> {
  const out = await gitOk(dir, ['diff', '--numstat', '--no-renames', base, 'HEAD']);
  let lines = 0;
  for (const row of out.split('\n').filter(Boolean)) {
    const [added, removed] = row.split('\t');
    lines += added === '-' ? 1 : Number(added) + Number(removed);
  }
  return lines;
}

/**
 * Puts `commit` on the branch checked out in `dir` (the card's worktree on svc/<KEY>). The branch is
 * svc's, but its commits are not thrown away: when it holds commits `commit` lacks, they are kept on
 * `refs/svc/before-attempts/<KEY>` first (returned), and uncommitted files go on the stash.
 */
export async function adoptCommit(dir: string, key: string, commit: string): Promise<{ kept: string | null; stashed: boolean }> {
  const stashed = await isDirty(dir);
  if (stashed) await stashLeftovers(dir, `svc: left uncommitted in svc/${key} before its attempts' winner`);
  const contained = (await gitIn(dir, ['merge-base', '--is-ancestor', 'HEAD', commit])).code === 0;
  let kept: string | null = null;
  if (!contained) {
    kept = `refs/svc/before-attempts/${key}`;
    await gitOk(dir, ['update-ref', kept, 'HEAD']);
  }
  await gitOk(dir, ['reset', '--quiet', '--hard', commit]);
  return { kept, stashed };
}
