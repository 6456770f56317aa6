// Read and write commands over the contract, in the manner of gh: a table on a TTY, tab-separated
// rows when piped, one JSON document with --json.
import { Command, Option } from 'commander';
import type { Context } from '../context.js';
import { withExamples } from '../program.js';

type Ctx = (cmd: Command) => Context;
const collect = (value: string, previous: string[] = []) => [...previous, value];

function lazy<A extends unknown[]>(context: Ctx, load: () => Promise<(ctx: Context, ...args: A) => Promise<void> | void>) {
  return async (...argv: unknown[]) => {
    const cmd = argv[argv.length - 1] as Command;
    const handler = await load();
    await handler(context(cmd), ...(argv.slice(0, -1) as A));
  };
}

export function registerRead(program: Command, context: Ctx): void {
  withExamples(
    program.command('whoami').description('show the user, workspace and scopes of the token').action(lazy(context, async () => (await import('./read.js')).whoami)),
    'svc whoami',
  );
  withExamples(
    program.command('workspaces').description('list the workspaces the token owner belongs to').action(lazy(context, async () => (await import('./read.js')).workspaces)),
    'svc workspaces --json',
  );

  const projects = program.command('projects').description('list projects, or show one');
  withExamples(projects.command('list', { isDefault: true }).description('list the projects you may browse').action(lazy(context, async () => (await import('./read.js')).projectsList)), 'svc projects');
  withExamples(projects.command('show <key>').description('show one project').action(lazy(context, async () => (await import('./read.js')).projectShow)), 'svc projects show PROJ');

  const items = program.command('items').description('list, show, count, create and edit work items');
  withExamples(
    items
      .command('list')
      .description('list work items (filter grammar: docs/service.md)')
      .option('-p, --project <key>', 'project key (SVC_PROJECT)')
      .option('--filter <expr>', 'a filter expression, e.g. "status:todo priority:high,highest"')
      .option('--limit <n>', 'most rows to print')
      .action(lazy(context, async () => (await import('./items.js')).itemsList)),
    'svc items list --filter "kind:bug -status:done"',
    'svc items list --json | jq ".[].key"',
  );
  withExamples(items.command('show <key>').description('show one work item in full').action(lazy(context, async () => (await import('./items.js')).itemsShow)), 'svc items show PROJ-12');
  withExamples(
    items.command('count').description('count work items exactly').option('-p, --project <key>', 'project key').option('--filter <expr>', 'a filter expression').action(lazy(context, async () => (await import('./items.js')).itemsCount)),
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
      .action(lazy(context, async () => (await import('./items.js')).itemsCreate)),
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
      .action(lazy(context, async () => (await import('./items.js')).itemsEdit)),
    'svc items edit PROJ-12 --priority high',
  );

  const ready = program.command('ready').description('the ready lanes');
  for (const lane of ['bugs', 'containers'] as const) {
    const cmd = ready
      .command(lane)
      .description(lane === 'bugs' ? 'ready bug work, grouped' : 'runnable containers, next first')
      .option('-p, --project <key>', 'project key')
      .option('--priority <p>', 'priority (repeatable)', collect)
      .option('--assignee <id>', 'assignee id or `none`')
      .option('--sprint <id>', 'sprint id or `active`');
    if (lane === 'bugs') {
      cmd
        .option('--kind <kind>', 'kind (repeatable)', collect)
        .option('--ancestor <key>', 'beneath this container (repeatable)', collect)
        .addOption(new Option('--allow-soft-block', 'do not require ancestors to be ready'));
    }
    cmd.action(lazy(context, async () => (await import('./items.js')).readyLane(lane)));
    withExamples(cmd, `svc ready ${lane} --priority high`);
  }

  const runs = program.command('runs').description('dispatch run records');
  withExamples(runs.command('show <id>').description('show a run with its legs').action(lazy(context, async () => (await import('./runs.js')).runsShow)), 'svc runs show 01J9ZK3RUN');
  withExamples(
    runs.command('watch <id>').description('follow a run until it closes').option('--interval <duration>', 'poll interval', '2s').action(lazy(context, async () => (await import('./runs.js')).runsWatch)),
    'svc runs watch 01J9ZK3RUN',
  );
  withExamples(
    runs.command('list').description('the runs recorded on this machine: id, command, cards, status, started, where (no request)').action(lazy(context, async () => (await import('./runs.js')).runsList)),
    'svc runs list --json',
  );
  withExamples(
    runs.command('cancel <run-id>').description('close a run nobody is running (e.g. a --hosted run no runner picked up) as cancelled; refuses a run live on this machine').action(lazy(context, async () => (await import('./runs.js')).runsCancel)),
    'svc runs cancel 01J9ZK3RUN',
  );
  withExamples(
    runs.command('recover [run-id]').description('finish runs whose svc died: stop their leftover agents, send what was not sent, close them as decided (else interrupted); live runs are skipped').action(lazy(context, async () => (await import('./runs.js')).runsRecover)),
    'svc runs recover',
  );
  withExamples(
    runs
      .command('report [run-ids...]')
      .description('write a junit, markdown, html or json report of runs from the local state')
      .option('--since <duration>', 'also every local run opened this recently (e.g. 12h)')
      .option('--format <format>', 'junit, markdown, html or json (default: from --output\'s extension)')
      .option('-o, --output <file>', 'where to write it (default: stdout)')
      .action(lazy(context, async () => (await import('./runs-report.js')).runsReport)),
    'svc runs report 01J9ZK3RUN --format html --output report.html',
    'svc runs report --since 12h --output svc-junit.xml',
  );
  withExamples(
    program.command('logs <run-id> [key]').description('print the local agent logs of a run in run order (close-out last), or of one leg').action(lazy(context, async () => (await import('./runs.js')).logs)),
    'svc logs 01J9ZK3RUN PROJ-12',
  );
  const worktrees = program.command('worktrees').description('the per-card git worktrees');
  withExamples(
    worktrees.command('prune').description('remove clean worktrees of finished cards; never one with uncommitted work or of a run still live on this machine').option('--repo <dir>', 'the repository (SVC_REPO)').action(lazy(context, async () => (await import('./runs.js')).worktreesPrune)),
    'svc worktrees prune',
  );

  withExamples(
    program
      .command('api <method> <path>')
      .description('call any operation of the contract, like `gh api`')
      .option('-f, --field <key=value>', 'a body field (or a query parameter on GET; repeatable)', collect)
      .option('--input <file>', 'the request body from a file (- for stdin)')
      .option('--paginate', 'follow nextCursor and print every row')
      .action(lazy(context, async () => (await import('./api.js')).apiCommand)),
    'svc api GET /me',
    'svc api GET /projects/PROJ/work-items --paginate -f filter="kind:bug"',
    'svc api PATCH /work-items/PROJ-12 -f priority=high',
  );
}
