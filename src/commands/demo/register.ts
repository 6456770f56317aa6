import type { Command } from 'commander';
import type { Context } from '../context.js';
import { withExamples } from '../examples.js';
import { addFlags, flag, flagsOf } from '../flag-table.js';

const DEMO_FLAGS = [flag('--keep', 'keep the throwaway repository and state folder (removed when the demo ends otherwise)')];

export function registerDemo(program: Command, context: (cmd: Command) => Context): void {
  withExamples(
    addFlags(
      program.command('demo').description('a whole dispatch run on the embedded local service with a scripted agent; nothing to set up'),
      DEMO_FLAGS,
    ).action(async (_o: unknown, cmd: Command) => {
      const { runDemo } = await import('./demo.js');
      await runDemo({ keep: Boolean(flagsOf(cmd, DEMO_FLAGS).keep) }, context(cmd));
    }),
    'svc demo',
    'svc demo --keep',
  );
}
