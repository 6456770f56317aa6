// `svc ready bugs|containers`: the ready lanes (operations 23–24).
import { Option, type Command } from 'commander';
import type { Context } from '../context.js';
import { withExamples } from '../examples.js';
import type { ReadyBugsOptions } from './bugs.js';
import type { ReadyContainersOptions } from './containers.js';

const collect = (value: string, previous: string[] = []) => [...previous, value];

export function registerReady(program: Command, context: (cmd: Command) => Context): void {
  const ready = program.command('ready').description('the ready lanes');
  const lane = (name: 'bugs' | 'containers', description: string) =>
    ready
      .command(name)
      .description(description)
      .option('-p, --project <key>', 'project key')
      .option('--priority <p>', 'priority (repeatable)', collect)
      .option('--assignee <id>', 'assignee id or `none`')
      .option('--sprint <id>', 'sprint id or `active`');

  withExamples(
    lane('bugs', 'ready bug work, grouped')
      .option('--kind <kind>', 'kind (repeatable)', collect)
      .option('--ancestor <key>', 'beneath this container (repeatable)', collect)
      .addOption(new Option('--allow-soft-block', 'do not require ancestors to be ready'))
      .action(async (opts: ReadyBugsOptions, cmd: Command) => {
        const { runReadyBugs } = await import('./bugs.js');
        await runReadyBugs(opts, context(cmd));
      }),
    'svc ready bugs --priority high',
  );
  withExamples(
    lane('containers', 'runnable containers, next first').action(async (opts: ReadyContainersOptions, cmd: Command) => {
      const { runReadyContainers } = await import('./containers.js');
      await runReadyContainers(opts, context(cmd));
    }),
    'svc ready containers --priority high',
  );
}
