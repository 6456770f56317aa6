// getPlan (a plan with the proposals that have arrived) and 22 (its status and job).
import { notFound, type Reply, type RequestContext } from '../kernel.js';
import { projectById } from '../core/access.js';
import { planById, toPlan, toPlanStatus, type PlanRow } from './store.js';

/** A plan of a project outside the token's reach is answered like a missing one. */
function planForCaller(ctx: RequestContext): PlanRow {
  const plan = planById(ctx.db, ctx.params.planId!);
  if (!plan || !projectById(ctx.db, ctx.principal, plan.project_id)) throw notFound('plan');
  return plan;
}

export const getPlan = (ctx: RequestContext): Reply => ({ status: 200, body: toPlan(ctx.db, planForCaller(ctx)) });

export const getPlanStatus = (ctx: RequestContext): Reply => ({ status: 200, body: toPlanStatus(ctx.db, planForCaller(ctx)) });
