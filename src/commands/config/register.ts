// `svc config get|set|unset|list`: the stored settings (config/store.ts).
import type { Command } from 'commander';
import type { Context, Depth } from '../context.js';
import { withExamples } from '../examples.js';

export function registerConfig(program: Command, context: (cmd: Command) => Context, depth: Depth = 'whole'): void {
  const group = program.command('config').description('read and change the stored settings');
  if (depth === 'top') return;
  withExamples(
    group
      .command('get <key>')
      .description('print one stored setting')
      .action(async (key: string, _o, cmd: Command) => {
        const { runConfigGet } = await import('./get.js');
        runConfigGet({ key }, context(cmd));
      }),
    'svc config get project',
  );
  withExamples(
    group
      .command('set <key> <value>')
      .description('store a setting')
      .action(async (key: string, value: string, _o, cmd: Command) => {
        const { runConfigSet } = await import('./set.js');
        runConfigSet({ key, value }, context(cmd));
      }),
    'svc config set project PROJ',
    'svc config set baseUrl https://svc.example.com',
  );
  withExamples(
    group
      .command('unset <key>')
      .description('remove a stored setting')
      .action(async (key: string, _o, cmd: Command) => {
        const { runConfigUnset } = await import('./unset.js');
        runConfigUnset({ key }, context(cmd));
      }),
    'svc config unset model',
  );
  withExamples(
    group
      .command('list')
      .description('print every stored setting')
      .action(async (_o, cmd: Command) => {
        const { runConfigList } = await import('./list.js');
        runConfigList({}, context(cmd));
      }),
    'svc config list --json',
  );
}
