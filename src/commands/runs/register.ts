// `svc runs show|watch|list|cancel|recover|report`: dispatch run records, on the service (show,
// watch, cancel) and in this machine's state folder (list, recover, report).
import type { Command } from 'commander';
import type { Context, Depth } from '../context.js';
import { withExamples } from '../examples.js';
import { addFlags, flagsOf } from '../flag-table.js';
import { WATCH_FLAGS, REPORT_FLAGS } from './flags.js';

export function registerRuns(program: Command, context: (cmd: Command) => Context, depth: Depth = 'whole'): void {
  const runs = program.command('runs').description('dispatch run records');
  if (depth === 'top') return;
  withExamples(
    runs
      .command('show <id>')
      .description('show a run with its legs')
      .action(async (id: string, _opts: unknown, cmd: Command) => {
        const { runRunsShow } = await import('./show.js');
        await runRunsShow({ id }, context(cmd));
      }),
    'svc runs show 01J9ZK3RUN',
  );
  withExamples(
    addFlags(runs.command('watch <id>').description('follow a run until it closes'), WATCH_FLAGS).action(async (id: string, _o: unknown, cmd: Command) => {
      const { runRunsWatch } = await import('./watch.js');
      await runRunsWatch({ ...flagsOf(cmd, WATCH_FLAGS), id }, context(cmd));
    }),
    'svc runs watch 01J9ZK3RUN',
  );
  withExamples(
    runs
      .command('list')
      .description('the runs recorded on this machine: id, command, cards, status, started, where (no request)')
      .action(async (_opts: unknown, cmd: Command) => {
        const { runRunsList } = await import('./list.js');
        await runRunsList({}, context(cmd));
      }),
    'svc runs list --json',
  );
  withExamples(
    runs
      .command('cancel <run-id>')
      .description('close a run nobody is running (e.g. a --hosted run no runner picked up) as cancelled; refuses a run live on this machine')
      .action(async (runId: string, _opts: unknown, cmd: Command) => {
        const { runRunsCancel } = await import('./cancel.js');
        await runRunsCancel({ runId }, context(cmd));
      }),
    'svc runs cancel 01J9ZK3RUN',
  );
  withExamples(
    runs
      .command('recover [run-id]')
      .description(
        'finish runs whose svc died: stop their leftover agents, send what was not sent, close them as decided (else interrupted); live runs are skipped',
      )
      .action(async (runId: string | undefined, _opts: unknown, cmd: Command) => {
        const { runRunsRecover } = await import('./recover.js');
        await runRunsRecover(runId === undefined ? {} : { runId }, context(cmd));
      }),
    'svc runs recover',
  );
  withExamples(
    addFlags(runs.command('report [run-ids...]').description('write a junit, markdown, html or json report of runs from the local state'), REPORT_FLAGS).action(
      async (runIds: string[], _o: unknown, cmd: Command) => {
        const { runRunsReport } = await import('./report.js');
        await runRunsReport({ ...flagsOf(cmd, REPORT_FLAGS), runIds }, context(cmd));
      },
    ),
    'svc runs report 01J9ZK3RUN --format html --output report.html',
    'svc runs report --since 12h --output svc-junit.xml',
  );
}
