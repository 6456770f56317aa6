// `svc plan show ID`: getPlan. The proposals are data (stdout); the plan's title, status and summary
// are for the person reading (stderr), so piped rows stay rows.
import type { Plan, PlanProposal } from '../../contract/types.js';
import { connect } from '../connect.js';
import type { Context } from '../context.js';

export interface PlanShowOptions {
  id: string;
}

export async function runPlanShow(opts: PlanShowOptions, ctx: Context): Promise<void> {
  printPlan(await connect(ctx).getPlan(opts.id), ctx);
}

/** Prints a plan: the whole document with --json, else a header on stderr and a row per proposal. */
export function printPlan(plan: Plan, ctx: Context): void {
  if (ctx.out.json) return ctx.out.document(plan);
  ctx.out.info(`${plan.title ?? `Plan ${plan.id}`} · ${plan.status} · ${plan.proposals.length} proposal${plan.proposals.length === 1 ? '' : 's'} (${plan.id})`);
  if (plan.summary) ctx.out.info(plan.summary);
  ctx.out.table(['REF', 'OP', 'KIND', 'KEY', 'PARENT', 'BLOCKED BY', 'TITLE'], plan.proposals.map(proposalRow));
}

/**
 * A proposal as a row. Beyond the names the contract gives (op, proposedFields, patch, parentRef,
 * blockedByRefs, workItemKey) the shape is open, so `ref` falls back to the position.
 */
function proposalRow(p: PlanProposal, index: number): string[] {
  const fields = p.proposedFields ?? p.patch ?? {};
  const text = (v: unknown) => (typeof v === 'string' && v !== '' ? v : '-');
  return [
    typeof p.ref === 'string' ? p.ref : `#${index + 1}`,
    p.op,
    text(fields.kind),
    text(p.workItemKey),
    text(p.parentRef),
    p.blockedByRefs.length ? p.blockedByRefs.join(',') : '-',
    text(fields.title),
  ];
}
