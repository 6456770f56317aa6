// The push after an implemented leg (a card's, or the close-out's), and the hook that hangs pull
// requests off it.
import { reasonLine, repoOf, type LegContext } from '../leg-context.js';

/**
 * Pushes an implemented leg's branch (`--push`). Null when pushed (or nothing to do), else the
 * leg's failure reason: "push failed: …", one line, no token.
 */
export async function pushLeg(ctx: LegContext, key: string, branch: string): Promise<string | null> {
  const { opts, deps } = ctx;
  // A review never pushes, whatever --push or a hosted run's default says.
  if (ctx.mode === 'review' || !opts.push || !deps.pushBranch) return null;
  const repo = repoOf(ctx, key);
  try {
    await deps.pushBranch(repo, branch);
  } catch (error) {
    return `push failed: ${reasonLine(error instanceof Error ? error.message : String(error), opts) || 'error'}`;
  }
  deps.output.info(`${key}: pushed ${branch}`);
  // The one place where "branch pushed for leg" happens: pull requests hang off it.
  if (deps.onBranchPushed) {
    try {
      await deps.onBranchPushed({ runId: ctx.runId, key, branch, repo, mode: ctx.mode });
    } catch (error) {
      deps.output.warn(`${key}: after the push: ${reasonLine(error instanceof Error ? error.message : String(error), opts) || 'error'}`);
    }
  }
  return null;
}
