// `svc worktrees prune`: the per-card git worktrees.
import type { Command } from 'commander';
import type { Context } from '../context.js';
import { withExamples } from '../examples.js';
import type { WorktreesPruneOptions } from './prune.js';

export function registerWorktrees(program: Command, context: (cmd: Command) => Context): void {
  const worktrees = program.command('worktrees').description('the per-card git worktrees');
  withExamples(
    worktrees
      .command('prune')
      .description('remove clean worktrees of finished cards; never one with uncommitted work or of a run still live on this machine')
      .option('--repo <dir>', 'the repository (SVC_REPO)')
      .action(async (opts: WorktreesPruneOptions, cmd: Command) => {
        const { runWorktreesPrune } = await import('./prune.js');
        await runWorktreesPrune(opts, context(cmd));
      }),
    'svc worktrees prune',
  );
}
