// `svc plan submit`: submitPlanSession answers 202 at once. With --wait we poll getPlanStatus with a spinner until the
// plan leaves `generating`, then print getPlan's proposals.
import { setTimeout as sleep } from 'node:timers/promises';
import type { ApiClient } from '../../api/client.js';
import type { PlanStatusView } from '../../contract/types.js';
import { parseDuration } from '../../dispatch/index.js';
import { connect } from '../connect.js';
import type { Context } from '../context.js';
import { EXIT } from '../exit-codes.js';
import { requireProject } from '../settings.js';
import { threadAddress } from './add.js';
import { printPlan } from './show.js';
import type { PlanSubmitFlags } from './flags.js';

/** The flags of `svc plan submit`; --timeout, which commander defaults, may be left out (only --wait reads it). */
export type PlanSubmitOptions = Partial<PlanSubmitFlags>;

/** First poll after half a second, then doubling up to this: a plan takes seconds to minutes. */
const MAX_POLL_MS = 4_000;

export async function runPlanSubmit(opts: PlanSubmitOptions, ctx: Context): Promise<void> {
  const project = requireProject(ctx, opts.project);
  const address = threadAddress(opts.target);
  const timeoutMs = opts.wait ? parseDuration(opts.timeout ?? '10m', '--timeout') : 0;
  const api = connect(ctx);
  const submitted = await api.submitPlanSession(project, address);
  if (!opts.wait) {
    if (ctx.out.json) return ctx.out.document(submitted);
    ctx.out.data(submitted.planId);
    ctx.out.info(`Submitted: plan ${submitted.planId} is generating (job ${submitted.jobId}); see it with \`svc plan show ${submitted.planId}\``);
    return;
  }

  const { planId } = submitted;
  const spinner = await ctx.out.spinner(`Planning: plan ${planId}, job ${submitted.jobId} queued`);
  const outcome = await waitForPlan(api, planId, timeoutMs, ctx, (status) => spinner.text(`Planning: plan ${planId}, ${jobState(status)}`));
  if (outcome.kind === 'interrupted') {
    spinner.stop();
    ctx.out.info(`Stopped waiting; plan ${planId} is still generating (\`svc plan show ${planId}\`)`);
    return;
  }
  if (outcome.kind === 'timeout') {
    spinner.stop();
    throw Object.assign(new Error(`plan ${planId} did not finish within ${opts.timeout}; see it later with \`svc plan show ${planId}\``), {
      exitCode: EXIT.failed,
    });
  }

  const plan = await api.getPlan(planId);
  if (outcome.kind === 'job_failed' || plan.status === 'declined') {
    // The plan is still printed (with --json, as the one document): what arrived may be useful.
    spinner.fail(
      `Plan ${planId} ${plan.status === 'declined' ? 'was declined' : 'failed'}: ${outcome.kind === 'job_failed' ? outcome.reason : 'the planning job failed'}`,
    );
    ctx.exitCode = EXIT.failed;
  } else {
    spinner.stop();
  }
  printPlan(plan, ctx);
}

type WaitOutcome = { kind: 'done' } | { kind: 'timeout' } | { kind: 'interrupted' } | { kind: 'job_failed'; reason: string };

async function waitForPlan(api: ApiClient, planId: string, timeoutMs: number, ctx: Context, progress: (s: PlanStatusView) => void): Promise<WaitOutcome> {
  const deadline = Date.now() + timeoutMs;
  for (let delay = 500; ; delay = Math.min(delay * 2, MAX_POLL_MS)) {
    const status = await api.getPlanStatus(planId);
    if (status.status !== 'generating') return { kind: 'done' };
    // The contract says a failed job shows in the job before the plan is declined (up to about an
    // hour later); the job's `status` is not in the contract, so it ends the wait only when present.
    if (status.job?.status === 'failed') {
      return { kind: 'job_failed', reason: typeof status.job.error === 'string' && status.job.error ? status.job.error : 'the planning job failed' };
    }
    progress(status);
    const left = deadline - Date.now();
    if (left <= 0) return { kind: 'timeout' };
    await sleep(Math.min(delay, left), undefined, { signal: ctx.interrupts.signal }).catch(() => undefined);
    if (ctx.interrupts.signal.aborted) return { kind: 'interrupted' };
  }
}

function jobState(status: PlanStatusView): string {
  const job = status.job;
  if (!job) return 'waiting for its job';
  // reachable:false is "could not ask the planner (yet)", not a dead job: keep waiting.
  if (job.reachable === false) return 'the planning service cannot be reached yet';
  return typeof job.status === 'string' ? `job ${job.status}` : 'job in progress';
}
