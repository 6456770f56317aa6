// `svc workflow check`: the repository's own workflow (.svc/workflow.yml, docs/workflow.md).
import type { Command } from 'commander';
import type { Context } from '../context.js';
import { withExamples } from '../examples.js';
import type { WorkflowCheckOptions } from './check.js';

export function registerWorkflow(program: Command, context: (cmd: Command) => Context): void {
  const workflow = program.command('workflow').description("the repository's own workflow: setup, copy, ports, verify, teardown (.svc/workflow.yml)");
  withExamples(
    workflow
      .command('check')
      .description('check .svc/workflow.yml: one line per mistake, with its line; exit 2 when there is one')
      .option('--repo <dir>', 'the repository (SVC_REPO; default: the current directory)')
      .option('--ref <commit>', 'check the file as committed there (what a run uses) instead of the working tree\'s')
      .action(async (opts: WorkflowCheckOptions, cmd: Command) => {
        const { runWorkflowCheck } = await import('./check.js');
        await runWorkflowCheck(opts, context(cmd));
      }),
    'svc workflow check',
    'svc workflow check --ref HEAD',
  );
}
