// `svc attach`: inside a hosted container, read the run with its own credential and execute it
// through the engine, as any dispatch command would there (run.ts). `--dry-run` only shows what it
// would execute (command, scope, agent, and each leg's item, repository and branch): it mints no
// git token and clones nothing.
import type { HostedExecution } from '../../dispatch/hosted/index.js';
import { loadEngine, loadHosted } from '../../dispatch/index.js';
import type { Context } from '../context.js';
import { runHostedCommand, type HostedRunFlags, type HostedRunRequest } from './run.js';

export interface AttachPlan {
  runId: string;
  command: string;
  origin: string;
  status: string;
  scope: { workItemId: string | null; label: string | null } | null;
  agent: string | null;
  model: string | null;
  legs: Array<{ workItemKey: string; disposition: string; title: string; repositories: string[]; branch: string }>;
  /** Settled or skipped cards, not executed again. */
  settled: Array<{ workItemKey: string; disposition: string; skipReason: string | null }>;
  /** Every branch is pushed after an implemented leg (hosted runs push by default; `--no-push`). */
  push: boolean;
}

/** The plan of a hosted execution. */
export async function attachPlan(h: Pick<HostedExecution, 'run' | 'cards'>, push = true): Promise<AttachPlan> {
  const [{ branchFor }, { targetRepositoriesOf }] = await Promise.all([loadEngine(), loadHosted()]);
  const open = new Set(h.cards.map((c) => c.card.workItemKey));
  return {
    runId: h.run.run.id,
    command: h.run.command,
    origin: h.run.run.origin,
    status: h.run.run.status,
    scope: h.run.scope,
    agent: h.run.run.agent,
    model: h.run.run.model,
    legs: h.cards.map(({ card, item }) => ({
      workItemKey: card.workItemKey,
      disposition: card.disposition,
      title: item.title,
      repositories: targetRepositoriesOf(item),
      branch: branchFor(card.workItemKey),
    })),
    settled: h.run.cards
      .filter((c) => !open.has(c.workItemKey))
      .map((c) => ({ workItemKey: c.workItemKey, disposition: c.disposition, skipReason: c.skipReason })),
    push,
  };
}

/** Prints the plan (`--dry-run`, and any dispatch command's `--dry-run` inside a hosted container). */
export async function printAttachPlan(ctx: Context, hosted: Pick<HostedExecution, 'run' | 'cards'>, push = true): Promise<void> {
  const plan = await attachPlan(hosted, push);
  if (ctx.out.json) return ctx.out.document(plan);
  ctx.out.data(`run ${plan.runId}: ${plan.command} (${plan.origin}, ${plan.status})`);
  if (plan.scope) ctx.out.data(`scope: ${plan.scope.label ?? plan.scope.workItemId}`);
  ctx.out.data(`agent: ${plan.agent ?? '(default)'}${plan.model ? ` model ${plan.model}` : ''}`);
  if (plan.legs.length === 0) ctx.out.data('nothing left to run');
  else {
    ctx.out.table(
      ['KEY', 'STATE', 'REPOSITORY', 'BRANCH', 'TITLE'],
      plan.legs.map((l) => [l.workItemKey, l.disposition, l.repositories.join(',') || '-', l.branch, l.title]),
    );
  }
  for (const s of plan.settled) ctx.out.info(`${s.workItemKey}: ${s.disposition}${s.skipReason ? ` (${s.skipReason})` : ''}`);
}

export interface AttachOptions extends HostedRunFlags {
  /** Tests: the helper's argv and broker tuning. */
  hosted?: HostedRunRequest['hosted'];
}

/** `svc attach`: executes the run (`--dry-run`: prints the plan only). */
export async function runAttach(opts: AttachOptions, ctx: Context): Promise<void> {
  const { hosted, ...flags } = opts;
  await runHostedCommand(ctx, { invokedAs: 'attach', flags, ...(hosted ? { hosted } : {}) }, (c, h) => printAttachPlan(c, h, flags.push !== false));
}
