// `svc backlog [list]` and `svc backlog move KEY...`: the project's backlog in rank order, and moving
// items out of their sprint (operations 10–11).
import type { Command } from 'commander';
import type { Context } from '../context.js';
import { withExamples } from '../examples.js';

export function registerBacklog(program: Command, context: (cmd: Command) => Context): void {
  const backlog = program.command('backlog').description('the backlog in rank order, and moving items out of their sprint');

  withExamples(
    backlog
      .command('list', { isDefault: true })
      .description('list the backlog in rank order (items in no sprint and not done); prints the total')
      .option('-p, --project <key>', 'project key (SVC_PROJECT)')
      .option('--filter <expr>', 'narrow it with a filter expression (grammar: docs/service.md)')
      .option('--limit <n>', 'most rows to print')
      .action(async (opts: { project?: string; filter?: string; limit?: string }, cmd: Command) => {
        const { runBacklogList } = await import('./list.js');
        await runBacklogList(opts, context(cmd));
      }),
    'svc backlog',
    'svc backlog --filter "kind:bug priority:high,highest" --limit 10',
    'svc backlog --json | jq .total',
  );

  withExamples(
    backlog
      .command('move <keys...>')
      .description('move work items out of their sprint into the backlog, all or none; prints the moved keys')
      .option('-p, --project <key>', 'project key (SVC_PROJECT)')
      .action(async (keys: string[], opts: { project?: string }, cmd: Command) => {
        const { runBacklogMove } = await import('./move.js');
        await runBacklogMove({ ...opts, keys }, context(cmd));
      }),
    'svc backlog move PROJ-12 PROJ-14',
  );
}
