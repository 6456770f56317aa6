// `svc designs`: the project's approved designs, newest first (listDesigns).
import type { Command } from 'commander';
import type { Context } from '../context.js';
import { withExamples } from '../examples.js';
import { addFlags, flagsOf } from '../flag-table.js';
import { DESIGNS_FLAGS } from './flags.js';

export function registerDesigns(program: Command, context: (cmd: Command) => Context): void {
  withExamples(
    addFlags(
      program.command('designs').description('list the approved designs, newest first, with where their files live in the repository'),
      DESIGNS_FLAGS,
    ).action(async (_o: unknown, cmd: Command) => {
      const { runDesignsList } = await import('./list.js');
      await runDesignsList(flagsOf(cmd, DESIGNS_FLAGS), context(cmd));
    }),
    'svc designs',
    'svc designs --path-prefix design/checkout/ --query "guest"',
    'svc designs --json | jq ".[].assets[].sourcePath"',
  );
}
