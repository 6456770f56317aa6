// `svc workflow check`: the repository's own workflow (.svc/workflow.yml, docs/workflow.md).
import type { Command } from 'commander';
import type { Context, Depth } from '../context.js';
import { withExamples } from '../examples.js';
import { addFlags, flagsOf } from '../flag-table.js';
import { CHECK_FLAGS } from './flags.js';

export function registerWorkflow(program: Command, context: (cmd: Command) => Context, depth: Depth = 'whole'): void {
  const workflow = program.command('workflow').description("the repository's own workflow: setup, copy, ports, verify, teardown (.svc/workflow.yml)");
  if (depth === 'top') return;
  withExamples(
    addFlags(
      workflow.command('check').description('check .svc/workflow.yml: one line per mistake, with its line; exit 2 when there is one'),
      CHECK_FLAGS,
    ).action(async (_o: unknown, cmd: Command) => {
      const { runWorkflowCheck } = await import('./check.js');
      await runWorkflowCheck(flagsOf(cmd, CHECK_FLAGS), context(cmd));
    }),
    'svc workflow check',
    'svc workflow check --ref HEAD',
  );
}
