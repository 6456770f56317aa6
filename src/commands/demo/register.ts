import type { Command } from 'commander';
import type { Context } from '../context.js';
import { withExamples } from '../examples.js';

export function registerDemo(program: Command, context: (cmd: Command) => Context): void {
  withExamples(
    program
      .command('demo')
      .description('a whole dispatch run on the embedded local service with a scripted agent; nothing to set up')
      .option('--keep', 'keep the throwaway repository and state folder (removed when the demo ends otherwise)')
      .action(async (opts: { keep?: boolean }, cmd: Command) => {
        const { runDemo } = await import('./demo.js');
        await runDemo({ keep: Boolean(opts.keep) }, context(cmd));
      }),
    'svc demo',
    'svc demo --keep',
  );
}
