// `svc worktrees prune`: the per-card git worktrees.
import type { Command } from 'commander';
import type { Context, Depth } from '../context.js';
import { withExamples } from '../examples.js';
import { addFlags, flagsOf } from '../flag-table.js';
import { PRUNE_FLAGS } from './flags.js';

export function registerWorktrees(program: Command, context: (cmd: Command) => Context, depth: Depth = 'whole'): void {
  const worktrees = program.command('worktrees').description('the per-card git worktrees');
  if (depth === 'top') return;
  withExamples(
    addFlags(
      worktrees
        .command('prune')
        .description('remove clean worktrees of finished cards; never one with uncommitted work or of a run still live on this machine'),
      PRUNE_FLAGS,
    ).action(async (_o: unknown, cmd: Command) => {
      const { runWorktreesPrune } = await import('./prune.js');
      await runWorktreesPrune(flagsOf(cmd, PRUNE_FLAGS), context(cmd));
    }),
    'svc worktrees prune',
  );
}
