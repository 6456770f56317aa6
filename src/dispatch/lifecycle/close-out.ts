// The close-out leg of run_scope (getCloseOutPrompt): once, after the card legs, in the scope's branch.
import { join } from 'node:path';
import type { WorkItemDetail } from '../../contract/types.js';
import type { LegResult } from '../agent/types.js';
import { headOf, recordLeg } from '../report/record.js';
import { runLegAgent } from './agent-run.js';
import { worktreeFor } from './leg.js';
import { repoOf, type LegContext } from '../leg-context.js';
import { pushLeg } from './push.js';

/** The close-out prompt (getCloseOutPrompt), run once in the scope's branch after the legs of run_scope. */
export async function runCloseOut(ctx: LegContext, scope: WorkItemDetail): Promise<LegResult> {
  // The service derives landedKeys from the legs' dispositions: they must reach it first, or the
  // close-out would be told that nothing landed.
  if (!(await ctx.stream.flush(ctx.opts.timeouts.flushMs ?? 60_000))) {
    ctx.deps.output.warn('some events are not yet on the service: the close-out prompt may miss landed legs');
  }
  const closeOut = await ctx.deps.service.getCloseOutPrompt(ctx.runId);
  const wt = await worktreeFor(ctx, scope.key);
  ctx.deps.output.info(`close-out of ${scope.key} on ${wt.branch} (${closeOut.landedKeys.length} landed)`);
  const prompt = ctx.deps.buildPrompt(scope, {
    branch: wt.branch,
    runId: ctx.runId,
    mode: 'implement',
    expectsCode: false,
    closeOut: { prompt: closeOut.prompt, landedKeys: closeOut.landedKeys },
  });
  const started = ctx.deps.clock.now();
  const ran = await runLegAgent(ctx, wt, scope.key, prompt, join(ctx.paths.logs, `${scope.key}.close-out.log`), undefined);
  const refused = ran.outcome === 'succeeded' ? await pushLeg(ctx, scope.key, wt.branch) : null;
  const result: LegResult = refused ? { ...ran, outcome: 'failed', reason: refused } : ran;
  recordLeg(ctx.paths, {
    key: scope.key,
    title: scope.title,
    disposition: result.outcome === 'succeeded' ? 'implemented' : 'failed',
    durationMs: result.durationMs,
    exitCode: result.exitCode,
    reason: result.outcome === 'succeeded' ? null : (result.reason ?? 'failed'),
    costUsd: result.costUsd ?? null,
    tokens: { in: result.tokensIn ?? null, out: result.tokensOut ?? null },
    sessionBranch: wt.branch,
    startedAt: new Date(started).toISOString(),
    endedAt: new Date(ctx.deps.clock.now()).toISOString(),
    repo: repoOf(ctx, scope.key),
    base: wt.headBefore,
    head: headOf(wt.path),
    closeOut: true,
  });
  return result;
}
