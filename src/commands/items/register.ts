// `svc items list|show|count|create|edit`: work items (listWorkItems, createWorkItem, countWorkItems, getWorkItem, updateWorkItem).
import type { Command } from 'commander';
import type { Context, Depth } from '../context.js';
import { withExamples } from '../examples.js';
import { addFlags, flagsOf } from '../flag-table.js';
import { LIST_FLAGS, COUNT_FLAGS, CREATE_FLAGS, EDIT_FLAGS } from './flags.js';

export function registerItems(program: Command, context: (cmd: Command) => Context, depth: Depth = 'whole'): void {
  const items = program.command('items').description('list, show, count, create and edit work items');
  if (depth === 'top') return;
  withExamples(
    addFlags(items.command('list').description('list work items (filter grammar: docs/service.md)'), LIST_FLAGS).action(async (_o: unknown, cmd: Command) => {
      const { runItemsList } = await import('./list.js');
      await runItemsList(flagsOf(cmd, LIST_FLAGS), context(cmd));
    }),
    'svc items list --filter "kind:bug -status:done"',
    'svc items list --json | jq ".[].key"',
  );
  withExamples(
    items
      .command('show <key>')
      .description('show one work item in full')
      .action(async (key: string, _opts: unknown, cmd: Command) => {
        const { runItemsShow } = await import('./show.js');
        await runItemsShow({ key }, context(cmd));
      }),
    'svc items show PROJ-12',
  );
  withExamples(
    addFlags(items.command('count').description('count work items exactly'), COUNT_FLAGS).action(async (_o: unknown, cmd: Command) => {
      const { runItemsCount } = await import('./count.js');
      await runItemsCount(flagsOf(cmd, COUNT_FLAGS), context(cmd));
    }),
    'svc items count --filter "ready:true leaf:true"',
  );
  withExamples(
    addFlags(items.command('create').description('create a work item'), CREATE_FLAGS).action(async (_o: unknown, cmd: Command) => {
      const { runItemsCreate } = await import('./create.js');
      await runItemsCreate(flagsOf(cmd, CREATE_FLAGS), context(cmd));
    }),
    'svc items create --kind task --title "Add retries" --parent PROJ-3',
  );
  withExamples(
    addFlags(items.command('edit <key>').description('edit a work item; refused if it changed since it was read'), EDIT_FLAGS).action(
      async (key: string, _o: unknown, cmd: Command) => {
        const { runItemsEdit } = await import('./edit.js');
        await runItemsEdit({ ...flagsOf(cmd, EDIT_FLAGS), key }, context(cmd));
      },
    ),
    'svc items edit PROJ-12 --priority high',
  );
}
