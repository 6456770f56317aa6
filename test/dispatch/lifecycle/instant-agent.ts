// Doubles behind the engine's runAgentProcess and prepareWorktree ports, for tests whose point is the
// engine's scheduling against the real service (which cards run, in which run, how runs close),
// not the agent process or git: a leg then spawns nothing. Pair them with `allowEmpty: true` (no
// commit is made, so the "no changes" rule would fail the leg). Real agents committing in real
// worktrees are covered by lifecycle.test.ts, ../agent/run-process.test.ts and ../git/.
import type { LegResult, LegSpec } from '../../../src/dispatch/agent/types.js';
import type { PreparedWorktree } from '../../../src/dispatch/ports.js';
import { branchFor } from '../../../src/dispatch/git/run-git.js';

/** Succeeds at once; an already aborted leg fails `interrupted`, as the real runner's does. */
export async function instantAgent(spec: LegSpec): Promise<LegResult> {
  if (spec.signal?.aborted) return { exitCode: null, signal: null, outcome: 'failed', reason: 'interrupted', durationMs: 0 };
  return { exitCode: 0, signal: null, outcome: 'succeeded', reason: null, durationMs: 0 };
}

/** Every card "works" in the repository itself, on its branch name; nothing is checked out. */
export async function inRepoWorktree(opts: { repo: string; key: string }): Promise<PreparedWorktree> {
  return { path: opts.repo, branch: branchFor(opts.key), created: true, headBefore: 'HEAD' };
}
