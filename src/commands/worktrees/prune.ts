// `svc worktrees prune`: removes clean worktrees of finished cards (the engine decides which).
import { liveRuns, pruneWorktrees, removeOrphanLegs, resolveStateDir } from '../../dispatch/index.js';
import type { Context } from '../context.js';
import type { WorktreesPruneFlags } from './flags.js';

/** The flags of `svc worktrees prune`, as its table in register.ts declares them. */
export type WorktreesPruneOptions = WorktreesPruneFlags;

export async function runWorktreesPrune(opts: WorktreesPruneOptions, ctx: Context): Promise<void> {
  const { resolve } = await import('node:path');
  // A worktree of a run still going on this machine is its agent's workplace, clean or not.
  const inUse = new Map<string, string>();
  for (const live of liveRuns(resolveStateDir(ctx.env))) {
    for (const key of live.keys) inUse.set(key, `in use by live run ${live.runId} (process ${live.owner.pid})`);
  }
  const result = await pruneWorktrees({ repo: resolve(ctx.cwd, opts.repo ?? ctx.env.SVC_REPO ?? '.'), inUse });
  // Agents' leg folders (svc as root) of svc processes that are gone go too.
  const legs = await removeOrphanLegs();
  if (ctx.out.json) return ctx.out.document({ ...result, legFolders: legs });
  for (const path of legs) ctx.out.info(`removed the agent leg folder ${path} (its svc is gone)`);
  for (const r of result.removed) ctx.out.info(`removed ${r.key} (${r.path})`);
  for (const k of result.kept) ctx.out.info(`kept ${k.key}: ${k.reason}`);
  if (!result.removed.length && !result.kept.length) ctx.out.info('No svc worktrees here.');
}
