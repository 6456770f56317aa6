// `svc backlog [list]` and `svc backlog move KEY...`: the project's backlog in rank order, and moving
// items out of their sprint (listBacklog, moveToBacklog).
import type { Command } from 'commander';
import type { Context, Depth } from '../context.js';
import { withExamples } from '../examples.js';
import { addFlags, flagsOf } from '../flag-table.js';
import { LIST_FLAGS, MOVE_FLAGS } from './flags.js';

export function registerBacklog(program: Command, context: (cmd: Command) => Context, depth: Depth = 'whole'): void {
  const backlog = program.command('backlog').description('the backlog in rank order, and moving items out of their sprint');
  if (depth === 'top') return;

  withExamples(
    addFlags(
      backlog.command('list', { isDefault: true }).description('list the backlog in rank order (items in no sprint and not done); prints the total'),
      LIST_FLAGS,
    ).action(async (_o: unknown, cmd: Command) => {
      const { runBacklogList } = await import('./list.js');
      await runBacklogList(flagsOf(cmd, LIST_FLAGS), context(cmd));
    }),
    'svc backlog',
    'svc backlog --filter "kind:bug priority:high,highest" --limit 10',
    'svc backlog --json | jq .total',
  );

  withExamples(
    addFlags(
      backlog.command('move <keys...>').description('move work items out of their sprint into the backlog, all or none; prints the moved keys'),
      MOVE_FLAGS,
    ).action(async (keys: string[], _o: unknown, cmd: Command) => {
      const { runBacklogMove } = await import('./move.js');
      await runBacklogMove({ ...flagsOf(cmd, MOVE_FLAGS), keys }, context(cmd));
    }),
    'svc backlog move PROJ-12 PROJ-14',
  );
}
