// `svc designs`: the project's approved designs, newest first (operation 12).
import type { Command } from 'commander';
import type { Context } from '../context.js';
import { withExamples } from '../examples.js';

export function registerDesigns(program: Command, context: (cmd: Command) => Context): void {
  withExamples(
    program
      .command('designs')
      .description('list the approved designs, newest first, with where their files live in the repository')
      .option('-p, --project <key>', 'project key (SVC_PROJECT)')
      .option('--path-prefix <path>', 'only designs with a file whose repository path starts with this (case-sensitive)')
      .option('--query <text>', 'only designs whose title contains this, ignoring case')
      .option('--limit <n>', 'most rows to print')
      .action(async (opts: { project?: string; pathPrefix?: string; query?: string; limit?: string }, cmd: Command) => {
        const { runDesignsList } = await import('./list.js');
        await runDesignsList(opts, context(cmd));
      }),
    'svc designs',
    'svc designs --path-prefix design/checkout/ --query "guest"',
    'svc designs --json | jq ".[].assets[].sourcePath"',
  );
}
