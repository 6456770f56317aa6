import type { Command } from 'commander';
import type { Context } from '../context.js';
import { withExamples } from '../examples.js';

export function registerWhoami(program: Command, context: (cmd: Command) => Context): void {
  withExamples(
    program
      .command('whoami')
      .description('show the user, workspace and scopes of the token')
      .action(async (_opts: unknown, cmd: Command) => {
        const { runWhoami } = await import('./whoami.js');
        await runWhoami({}, context(cmd));
      }),
    'svc whoami',
  );
}
