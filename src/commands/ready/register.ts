// `svc ready bugs|containers`: the ready lanes (listReadyBugs, listReadyContainers).
import type { Command } from 'commander';
import type { Context, Depth } from '../context.js';
import { withExamples } from '../examples.js';
import { addFlags, flagsOf } from '../flag-table.js';
import { LANE_FLAGS, BUGS_FLAGS } from './flags.js';

export function registerReady(program: Command, context: (cmd: Command) => Context, depth: Depth = 'whole'): void {
  const ready = program.command('ready').description('the ready lanes');
  if (depth === 'top') return;
  withExamples(
    addFlags(ready.command('bugs').description('ready bug work, grouped'), BUGS_FLAGS).action(async (_o: unknown, cmd: Command) => {
      const { runReadyBugs } = await import('./bugs.js');
      await runReadyBugs(flagsOf(cmd, BUGS_FLAGS), context(cmd));
    }),
    'svc ready bugs --priority high',
  );
  withExamples(
    addFlags(ready.command('containers').description('runnable containers, next first'), LANE_FLAGS).action(async (_o: unknown, cmd: Command) => {
      const { runReadyContainers } = await import('./containers.js');
      await runReadyContainers(flagsOf(cmd, LANE_FLAGS), context(cmd));
    }),
    'svc ready containers --priority high',
  );
}
