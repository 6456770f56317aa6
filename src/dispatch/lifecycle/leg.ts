// One card's leg, from its worktree through its agent to its disposition: the review's text, the
// "no changes" rule, the push and the pull request. The leg's disposition is written to the event
// stream whatever happens, so it is never dropped.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { WorkItemDetail } from '../../contract/types.js';
import { streamOf } from '../agent/spend.js';
import type { LegResult } from '../agent/types.js';
import { headOf, recordLeg } from '../report/record.js';
import { alignWithHead, fetchDeliveryHead, prepareFixWorktree, prepareReviewWorktree, settleReview } from '../git/delivery.js';
import { branchFor } from '../git/worktree.js';
import type { BestOf, LegSummary, PreparedWorktree } from '../ports.js';
import { expectsCode } from '../prompt.js';
import { createRedactor } from '../redact.js';
import { logPath } from '../state/folder.js';
import { StdoutTail, tailBytes } from './review-text.js';
import { pullRequestAfterLeg } from '../pr/after-leg.js';
import type { PullRequestRef } from '../pr/types.js';
import { attemptsOf, runAttempts, workRefusal } from './attempts.js';
import { discardAgentSide, openAgentSide, runLegAgent, type AgentSide } from './agent-run.js';
import { NoRepositoryError, repoOf, secretsNow, workflowOf, type LegContext } from '../leg-context.js';
import { pushLeg } from './push.js';

export interface LegOutcome {
  summary: LegSummary;
  implemented: boolean;
}

export async function worktreeFor(ctx: LegContext, key: string, item?: WorkItemDetail): Promise<PreparedWorktree> {
  const { opts, deps } = ctx;
  // fix and review work on the pull request's own head, fetched from origin (git/delivery.ts).
  if (item && (ctx.mode === 'fix' || ctx.mode === 'review')) {
    const repo = repoOf(ctx, key);
    const head = await fetchDeliveryHead(repo, item, ctx.mode);
    const root = opts.worktreeRoot ? { root: opts.worktreeRoot } : {};
    if (ctx.mode === 'review') return prepareReviewWorktree({ repo, key, runId: ctx.runId, head, ...root });
    if (!opts.worktree && deps.checkoutInPlace) return alignWithHead(await deps.checkoutInPlace({ repo, key, baseRef: head.sha }), head);
    return prepareFixWorktree({ repo, key, head, ...root });
  }
  const base = { repo: repoOf(ctx, key), key, ...(opts.baseRef ? { baseRef: opts.baseRef } : {}) };
  if (!opts.worktree) {
    if (!deps.checkoutInPlace) throw new Error('--no-worktree needs checkoutInPlace');
    return deps.checkoutInPlace(base);
  }
  return deps.prepareWorktree({ ...base, ...(opts.worktreeRoot ? { root: opts.worktreeRoot } : {}) });
}

/** Runs one card from worktree to disposition. Never throws: a failure is a failed leg. */
export async function runCardLeg(ctx: LegContext, item: WorkItemDetail, index: number, total: number): Promise<LegOutcome> {
  const { opts, deps, stream } = ctx;
  const key = item.key;
  const started = deps.clock.now();
  let wt: PreparedWorktree | null = null;
  let result: LegResult | null = null;
  let reason: string | null = null;
  let review: string | null = null;
  let pullRequest: PullRequestRef | null = null;
  let bestOf: BestOf | undefined;
  // What a pull request step reads of the leg, a review's and a push's alike.
  const afterLeg = (at: PreparedWorktree, done: LegResult) => ({
    item,
    repo: repoOf(ctx, key),
    branch: at.branch,
    headBefore: at.headBefore,
    worktree: at.path,
    result: done,
  });
  const code = expectsCode(item) && ctx.mode !== 'review';
  const workflow = workflowOf(ctx, key);
  const promptFor = (branch: string) =>
    deps.buildPrompt(item, {
      branch,
      runId: ctx.runId,
      mode: ctx.mode,
      expectsCode: code,
      ...(opts.doneStatuses ? { doneStatuses: opts.doneStatuses } : {}),
      ...(workflow ? { workflow: { rules: workflow.prompt, verify: workflow.verify, ports: workflow.ports } } : {}),
    });
  // --agent-user: the agent's side of the leg (a leased uid, its folder and repository, the prompt)
  // is made while git makes the card's worktree, since neither needs the other. A review's branch
  // is known only once its worktree is made.
  const tries = attemptsOf(ctx, key);
  const early = opts.agentUser && ctx.mode !== 'review' && tries === 1 ? branchFor(key) : null;
  // The agent's side until runLegAgent takes it: a leg that ends before gives it back.
  let side: Promise<AgentSide> | undefined;
  try {
    let prompt = early === null ? '' : promptFor(early);
    if (early !== null) {
      side = openAgentSide(ctx, key, prompt);
      side.catch(() => undefined);
    }
    wt = await worktreeFor(ctx, key, item);
    stream.push({ workItemKey: key, disposition: 'running', sessionBranch: wt.branch });
    deps.output.legStarted({ key, title: item.title, index, total, branch: wt.branch });
    // Best-of-N: the attempts run beside the card's worktree, which takes the winner's commit.
    if (tries > 1) {
      const best = await runAttempts(ctx, item, wt, tries, promptFor, code);
      result = best.result;
      reason = result.reason;
      bestOf = best.bestOf;
      return await land(wt, result, best.implemented);
    }
    // Without an early side, or where the worktree's branch is not the one it was made for: now.
    if (early !== wt.branch) {
      if (side) await discardAgentSide(side);
      side = undefined;
      prompt = promptFor(wt.branch);
    }
    // A review's text: its stream parser's final message, else the tail of a plain command's stdout.
    const plainTail = ctx.mode === 'review' && !streamOf(opts.agent) ? new StdoutTail() : null;
    const given = side;
    side = undefined;
    result = await runLegAgent(ctx, wt, key, prompt, logPath(ctx.paths, key), key, plainTail ? (c) => plainTail.push(c) : undefined, given);
    reason = result.reason;
    // A person's change on the service stopped the leg: whatever the agent had done is not the card's.
    const stopped = ctx.stoppedBy?.() ?? null;
    if (stopped) return finish(false, stopped);
    let implemented = result.outcome === 'succeeded';
    if (ctx.mode === 'review') {
      const said = result.finalMessage !== undefined ? result.finalMessage : (plainTail?.result() ?? null);
      review = recordReview(ctx, key, said && tailBytes(said));
      // Whatever the agent's verdict, a review that changed files failed, and its change is kept.
      const kept = await settleReview(repoOf(ctx, key), wt, key);
      if (kept) {
        implemented = false;
        reason = 'changed files during review';
        deps.output.warn(`${key}: the review agent changed files; kept on ${kept}, nothing pushed`);
      }
      // Pull requests (issue 17): a clean review is posted as a COMMENT review on the delivery.
      if (opts.pr && implemented) {
        pullRequest = await pullRequestAfterLeg(ctx, { ...afterLeg(wt, result), pushed: false, finalMessage: review });
      }
      return finish(implemented);
    }
    // What the agent must leave as the base has it (the check's own script, CI files, .svc/), and
    // the "no changes" rule: a card that expects code must leave a commit (unless --allow-empty).
    if (implemented) {
      const refused = await workRefusal(ctx, key, wt, code);
      if (refused) {
        implemented = false;
        reason = refused;
      }
    }
    return await land(wt, result, implemented);
  } catch (error) {
    if (side) await discardAgentSide(side);
    reason =
      error instanceof NoRepositoryError
        ? error.message
        : `${wt ? 'leg' : 'worktree'}: ${createRedactor(secretsNow(opts))(error instanceof Error ? error.message : String(error))}`;
    return finish(false);
  }

  /** An implemented leg's push, then its pull request (never fails the leg), then its disposition. */
  async function land(at: PreparedWorktree, done: LegResult, implemented: boolean): Promise<LegOutcome> {
    if (implemented) {
      const refused = await pushLeg(ctx, key, at.branch);
      if (refused) {
        implemented = false;
        reason = refused;
      }
    }
    // Pull requests (issue 17): after the push (a review's returned above); never fails the leg.
    if (opts.pr) {
      const pushed = implemented && Boolean(opts.push && deps.pushBranch);
      pullRequest = await pullRequestAfterLeg(ctx, { ...afterLeg(at, done), pushed });
    }
    return finish(implemented);
  }

  function finish(implemented: boolean, why: string | null = null): LegOutcome {
    if (why) reason = why;
    const disposition = implemented ? 'implemented' : 'failed';
    const exitCode = result?.exitCode ?? null;
    stream.push({
      workItemKey: key,
      disposition,
      ...(wt ? { sessionBranch: wt.branch } : {}),
      ...(exitCode !== null ? { exitCode } : {}),
    });
    const summary: LegSummary = {
      key,
      title: item.title,
      disposition,
      durationMs: result?.durationMs ?? deps.clock.now() - started,
      exitCode,
      reason: implemented ? null : (reason ?? 'failed'),
      costUsd: result?.costUsd ?? null,
      tokens: { in: result?.tokensIn ?? null, out: result?.tokensOut ?? null },
      sessionBranch: wt?.branch ?? null,
      ...(ctx.mode === 'review' ? { review } : {}),
      ...(opts.pr ? { pullRequest } : {}),
      ...(result?.check ? { check: result.check, attempts: result.attempts ?? 1 } : {}),
      ...(result?.network ? { network: result.network } : {}),
      ...(bestOf ? { bestOf } : {}),
    };
    recordLeg(ctx.paths, {
      ...summary,
      startedAt: new Date(started).toISOString(),
      endedAt: new Date(deps.clock.now()).toISOString(),
      repo: wt ? repoOf(ctx, key) : null,
      base: wt?.headBefore ?? null,
      head: headOf(wt?.path),
    });
    deps.output.legFinished(summary);
    return { summary, implemented };
  }
}

/**
 * A review's text, redacted: kept beside the leg's log (`<KEY>.review.md`) and, with --send-logs,
 * sent as one event body. Returns what the summary shows.
 */
function recordReview(ctx: LegContext, key: string, raw: string | null): string | null {
  if (!raw) return null;
  const text = createRedactor(secretsNow(ctx.opts))(raw);
  try {
    writeFileSync(join(ctx.paths.logs, `${key}.review.md`), `${text}\n`, { mode: 0o600 });
  } catch (error) {
    ctx.deps.output.warn(`${key}: could not store the review: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (ctx.opts.sendLogs) ctx.stream.push({ workItemKey: key, body: `review of ${key}:\n${tailBytes(text, 16_000)}` });
  return text;
}
