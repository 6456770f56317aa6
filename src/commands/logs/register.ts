import type { Command } from 'commander';
import type { Context } from '../context.js';
import { withExamples } from '../examples.js';
import { addFlags, flagsOf } from '../flag-table.js';
import { LOGS_FLAGS } from './flags.js';

export function registerLogs(program: Command, context: (cmd: Command) => Context): void {
  withExamples(
    addFlags(
      program.command('logs <run-id> [key]').description('print the local agent logs of a run in run order (close-out last), or of one leg'),
      LOGS_FLAGS,
    ).action(async (runId: string, key: string | undefined, _opts: unknown, cmd: Command) => {
      const { runLogs } = await import('./logs.js');
      await runLogs({ ...flagsOf(cmd, LOGS_FLAGS), runId, ...(key === undefined ? {} : { key }) }, context(cmd));
    }),
    'svc logs 01J9ZK3RUN PROJ-12',
  );
}
