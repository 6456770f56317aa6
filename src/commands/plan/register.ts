// `svc plan "text"`, `svc plan submit`, `svc plan show ID`: the planning conversation of a project
// (addPlanTurn, submitPlanSession, getPlan, getPlanStatus). Turns accumulate on a thread (one per anchor set, chosen with --target);
// a submission sends them all as one job that produces a plan of proposals.
import type { Command } from 'commander';
import type { Context, Depth } from '../context.js';
import { withExamples } from '../examples.js';
import { addFlags, flagsOf } from '../flag-table.js';
import { THREAD_FLAGS, SUBMIT_FLAGS } from './flags.js';

export function registerPlan(program: Command, context: (cmd: Command) => Context, depth: Depth = 'whole'): void {
  const plan = program.command('plan').description('talk to the planner: add turns to a thread, submit it, show the plan');
  if (depth === 'top') return;

  withExamples(
    addFlags(
      plan.command('add <text>', { isDefault: true }).description('add a turn to the planning thread (no job, nothing spent); `-` reads it from stdin'),
      THREAD_FLAGS,
    ).action(async (text: string, _o: unknown, cmd: Command) => {
      const { runPlanAdd } = await import('./add.js');
      await runPlanAdd({ ...flagsOf(cmd, THREAD_FLAGS), text }, context(cmd));
    }),
    'svc plan "Split checkout into a guest and a member flow" --target PROJ-3',
    'svc plan - --target PROJ-3 < notes.md',
  );

  withExamples(
    addFlags(
      plan.command('submit').description('send every turn of the thread as one planning job (spends an AI credit); prints the plan id'),
      SUBMIT_FLAGS,
    ).action(async (_o: unknown, cmd: Command) => {
      const { runPlanSubmit } = await import('./submit.js');
      await runPlanSubmit(flagsOf(cmd, SUBMIT_FLAGS), context(cmd));
    }),
    'svc plan submit --target PROJ-3 --wait',
    'svc plan show "$(svc plan submit)"',
  );

  withExamples(
    plan
      .command('show <plan-id>')
      .description('show a plan and its proposals (proposals are not work items until approved in the product)')
      .action(async (id: string, _opts: unknown, cmd: Command) => {
        const { runPlanShow } = await import('./show.js');
        await runPlanShow({ id }, context(cmd));
      }),
    'svc plan show plan_01J9ZK3',
  );
}
