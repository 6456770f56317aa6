// `svc runs show|watch|list|cancel|recover|report`: dispatch run records, on the service (show,
// watch, cancel) and in this machine's state folder (list, recover, report).
import type { Command } from 'commander';
import type { Context } from '../context.js';
import { withExamples } from '../examples.js';
import type { RunsReportOptions } from './report.js';

export function registerRuns(program: Command, context: (cmd: Command) => Context): void {
  const runs = program.command('runs').description('dispatch run records');
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
    runs
      .command('watch <id>')
      .description('follow a run until it closes')
      .option('--interval <duration>', 'poll interval', '2s')
      .action(async (id: string, opts: { interval: string }, cmd: Command) => {
        const { runRunsWatch } = await import('./watch.js');
        await runRunsWatch({ ...opts, id }, context(cmd));
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
      .description('finish runs whose svc died: stop their leftover agents, send what was not sent, close them as decided (else interrupted); live runs are skipped')
      .action(async (runId: string | undefined, _opts: unknown, cmd: Command) => {
        const { runRunsRecover } = await import('./recover.js');
        await runRunsRecover(runId === undefined ? {} : { runId }, context(cmd));
      }),
    'svc runs recover',
  );
  withExamples(
    runs
      .command('report [run-ids...]')
      .description('write a junit, markdown, html or json report of runs from the local state')
      .option('--since <duration>', 'also every local run opened this recently (e.g. 12h)')
      .option('--format <format>', 'junit, markdown, html or json (default: from --output\'s extension)')
      .option('-o, --output <file>', 'where to write it (default: stdout)')
      .action(async (runIds: string[], opts: Omit<RunsReportOptions, 'runIds'>, cmd: Command) => {
        const { runRunsReport } = await import('./report.js');
        await runRunsReport({ ...opts, runIds }, context(cmd));
      }),
    'svc runs report 01J9ZK3RUN --format html --output report.html',
    'svc runs report --since 12h --output svc-junit.xml',
  );
}
