// `svc items list|show|count|create|edit`: work items (operations 5–9).
import type { Command } from 'commander';
import type { Context } from '../context.js';
import { withExamples } from '../examples.js';
import type { ItemsCountOptions } from './count.js';
import type { ItemsCreateOptions } from './create.js';
import type { ItemsEditOptions } from './edit.js';
import type { ItemsListOptions } from './list.js';

export function registerItems(program: Command, context: (cmd: Command) => Context): void {
  const items = program.command('items').description('list, show, count, create and edit work items');
  withExamples(
    items
      .command('list')
      .description('list work items (filter grammar: docs/service.md)')
      .option('-p, --project <key>', 'project key (SVC_PROJECT)')
      .option('--filter <expr>', 'a filter expression, e.g. "status:todo priority:high,highest"')
      .option('--limit <n>', 'most rows to print')
      .action(async (opts: ItemsListOptions, cmd: Command) => {
        const { runItemsList } = await import('./list.js');
        await runItemsList(opts, context(cmd));
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
    items
      .command('count')
      .description('count work items exactly')
      .option('-p, --project <key>', 'project key')
      .option('--filter <expr>', 'a filter expression')
      .action(async (opts: ItemsCountOptions, cmd: Command) => {
        const { runItemsCount } = await import('./count.js');
        await runItemsCount(opts, context(cmd));
      }),
    'svc items count --filter "ready:true leaf:true"',
  );
  withExamples(
    items
      .command('create')
      .description('create a work item')
      .option('-p, --project <key>', 'project key')
      .requiredOption('--kind <kind>', 'epic, story, task, subtask or bug')
      .requiredOption('--title <title>', 'the title')
      .option('--parent <key>', 'parent item')
      .option('--description <markdown>', 'description (Markdown)')
      .option('--priority <p>', 'lowest … highest')
      .option('--type <type>', 'code, test, design, …')
      .action(async (opts: ItemsCreateOptions, cmd: Command) => {
        const { runItemsCreate } = await import('./create.js');
        await runItemsCreate(opts, context(cmd));
      }),
    'svc items create --kind task --title "Add retries" --parent PROJ-3',
  );
  withExamples(
    items
      .command('edit <key>')
      .description('edit a work item; refused if it changed since it was read')
      .option('--title <title>', 'new title')
      .option('--description <markdown>', 'new description')
      .option('--priority <p>', 'new priority')
      .option('--assignee <id>', 'new assignee; `none` to clear')
      .option('--explanation <markdown>', 'why the change is made')
      .action(async (key: string, opts: Omit<ItemsEditOptions, 'key'>, cmd: Command) => {
        const { runItemsEdit } = await import('./edit.js');
        await runItemsEdit({ ...opts, key }, context(cmd));
      }),
    'svc items edit PROJ-12 --priority high',
  );
}
