import type { Command } from 'commander';
import type { Context } from '../context.js';
import { withExamples } from '../examples.js';

export function registerWorkspaces(program: Command, context: (cmd: Command) => Context): void {
  withExamples(
    program
      .command('workspaces')
      .description('list the workspaces the token owner belongs to')
      .action(async (_opts: unknown, cmd: Command) => {
        const { runWorkspacesList } = await import('./list.js');
        await runWorkspacesList({}, context(cmd));
      }),
    'svc workspaces --json',
  );
}
