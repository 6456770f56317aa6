import type { Command } from 'commander';
import type { Context } from '../context.js';
import { withExamples } from '../program.js';

export function registerDemo(program: Command, context: (cmd: Command) => Context): void {
  withExamples(
    program
      .command('demo')
      .description('a whole dispatch run on the embedded local service with a scripted agent; nothing to set up')
      .action(async (_opts: unknown, cmd: Command) => {
        const { runDemo } = await import('./demo.js');
        await runDemo({}, context(cmd));
      }),
    'svc demo',
  );
}
