// The end every command that runs the engine shares (dispatch, a hosted run, the demo): the
// progress view while the engine runs, stopped however the run ends, the run's exit code as the
// command's, and the summary printed once.
import { refusalLine } from '../../dispatch/index.js';
import type { RunSummary } from '../../dispatch/lifecycle/types.js';
import { createRunProgress, printRunSummary, type RunProgress } from '../../ui/run-progress.js';
import type { Context } from '../context.js';

/** Runs the engine under the progress view; the run's exit code becomes the command's. */
export async function runUnderProgress(ctx: Context, run: (progress: RunProgress) => Promise<RunSummary>): Promise<RunSummary> {
  const progress = createRunProgress(ctx.out);
  let summary: RunSummary;
  try {
    summary = await run(progress);
  } finally {
    progress.stop();
  }
  ctx.exitCode = summary.exitCode;
  return summary;
}

/** The summary: one JSON document (--json), a dry run's plan, or the legs' table. */
export function printSummary(ctx: Context, summary: RunSummary): void {
  if (ctx.out.json) return ctx.out.document(summary);
  if (summary.dryRun) return printDryRun(ctx, summary);
  // No run opened and no success (no card of the named set could run): one line saying why.
  if (!summary.runId && summary.exitCode !== 0) return ctx.out.error(`svc: ${summary.note}`);
  printRunSummary(ctx.out, summary);
  printRefusals(ctx, summary);
}

/**
 * What the legs' fences refused, each once (docs/trust.md, "The network of a leg"): a hosted
 * runner's container takes the legs' logs with it, and these lines are what its log keeps of them.
 */
function printRefusals(ctx: Context, summary: RunSummary): void {
  for (const run of summary.runs?.length ? summary.runs : [summary])
    for (const leg of run.legs) for (const r of leg.network?.refused ?? []) ctx.out.info(`${leg.key}: ${refusalLine(r)}${r.count > 1 ? ` ×${r.count}` : ''}`);
}

function printDryRun(ctx: Context, summary: RunSummary): void {
  ctx.out.info(summary.note);
  ctx.out.table(
    ['CARD', 'TITLE', 'SKIP REASON'],
    summary.cards.map((c) => [c.key, c.title, c.skipReason ?? (c.gatedBy ? `gated by ${c.gatedBy}` : '')]),
  );
}
