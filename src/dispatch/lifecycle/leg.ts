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
import { branchFor } from '../git/run-git.js';
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
import type { Workflow } from '../workflow/policy.js';

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

/** What one card's leg has come to so far: what its disposition and summary are made of. */
interface LegState {
  ctx: LegContext;
  item: WorkItemDetail;
  key: string;
  started: number;
  wt: PreparedWorktree | null;
  result: LegResult | null;
  reason: string | null;
  review: string | null;
  pullRequest: PullRequestRef | null;
  bestOf?: BestOf;
}

/** Runs one card from worktree to disposition. Never throws: a failure is a failed leg. */
export async function runCardLeg(ctx: LegContext, item: WorkItemDetail, index: number, total: number): Promise<LegOutcome> {
  const { opts, deps, stream } = ctx;
  const key = item.key;
  const s: LegState = { ctx, item, key, started: deps.clock.now(), wt: null, result: null, reason: null, review: null, pullRequest: null };
  const code = expectsCode(item) && ctx.mode !== 'review';
  const workflow = workflowOf(ctx, key);
  const promptFor = (branch: string) => promptOf(ctx, item, code, workflow, branch);
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
    const wt = await worktreeFor(ctx, key, item);
    s.wt = wt;
    stream.push({ workItemKey: key, disposition: 'running', sessionBranch: wt.branch });
    deps.output.legStarted({ key, title: item.title, index, total, branch: wt.branch });
    // Best-of-N: the attempts run beside the card's worktree, which takes the winner's commit.
    if (tries > 1) {
      const best = await runAttempts(ctx, item, wt, tries, promptFor, code);
      s.result = best.result;
      s.reason = best.result.reason;
      s.bestOf = best.bestOf;
      return await land(s, wt, best.result, best.implemented);
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
    const result = await runLegAgent(ctx, wt, key, prompt, logPath(ctx.paths, key), key, plainTail ? (c) => plainTail.push(c) : undefined, given);
    s.result = result;
    s.reason = result.reason;
    // A person's change on the service stopped the leg: whatever the agent had done is not the card's.
    const stopped = ctx.stoppedBy?.() ?? null;
    if (stopped) return finish(s, false, stopped);
    if (ctx.mode === 'review') return await reviewed(s, wt, result, plainTail);
    // What the agent must leave as the base has it (the check's own script, CI files, .svc/), and
    // the "no changes" rule: a card that expects code must leave a commit (unless --allow-empty).
    let implemented = result.outcome === 'succeeded';
    if (implemented) {
      const refused = await workRefusal(ctx, key, wt, code);
      if (refused) {
        implemented = false;
        s.reason = refused;
      }
    }
    return await land(s, wt, result, implemented);
  } catch (error) {
    if (side) await discardAgentSide(side);
    s.reason =
      error instanceof NoRepositoryError
        ? error.message
        : `${s.wt ? 'leg' : 'worktree'}: ${createRedactor(secretsNow(opts))(error instanceof Error ? error.message : String(error))}`;
    return finish(s, false);
  }
}

/** The prompt of a card's leg on `branch`, with the workflow's rules where the repository has one. */
function promptOf(ctx: LegContext, item: WorkItemDetail, code: boolean, workflow: Workflow | null, branch: string): string {
  return ctx.deps.buildPrompt(item, {
    branch,
    runId: ctx.runId,
    mode: ctx.mode,
    expectsCode: code,
    ...(ctx.opts.doneStatuses ? { doneStatuses: ctx.opts.doneStatuses } : {}),
    ...(workflow ? { workflow: { rules: workflow.prompt, verify: workflow.verify, ports: workflow.ports } } : {}),
  });
}

/** What a pull request step reads of the leg, a review's and a push's alike. */
function afterLeg(s: LegState, at: PreparedWorktree, done: LegResult) {
  return { item: s.item, repo: repoOf(s.ctx, s.key), branch: at.branch, headBefore: at.headBefore, worktree: at.path, result: done };
}

/** A review leg's end: its text recorded, a review that changed files failed, a clean one posted. */
async function reviewed(s: LegState, wt: PreparedWorktree, result: LegResult, plainTail: StdoutTail | null): Promise<LegOutcome> {
  const { ctx, key } = s;
  let implemented = result.outcome === 'succeeded';
  const said = result.finalMessage !== undefined ? result.finalMessage : (plainTail?.result() ?? null);
  s.review = recordReview(ctx, key, said && tailBytes(said));
  // Whatever the agent's verdict, a review that changed files failed, and its change is kept.
  const kept = await settleReview(repoOf(ctx, key), wt, key);
  if (kept) {
    implemented = false;
    s.reason = 'changed files during review';
    ctx.deps.output.warn(`${key}: the review agent changed files; kept on ${kept}, nothing pushed`);
  }
  // A clean review is posted as a COMMENT review on the delivery (docs/pull-requests.md).
  if (ctx.opts.pr && implemented) {
    s.pullRequest = await pullRequestAfterLeg(ctx, { ...afterLeg(s, wt, result), pushed: false, finalMessage: s.review });
  }
  return finish(s, implemented);
}

/** An implemented leg's push, then its pull request (never fails the leg), then its disposition. */
async function land(s: LegState, at: PreparedWorktree, done: LegResult, implemented: boolean): Promise<LegOutcome> {
  const { ctx, key } = s;
  if (implemented) {
    const refused = await pushLeg(ctx, key, at.branch);
    if (refused) {
      implemented = false;
      s.reason = refused;
    }
  }
  // Pull requests (docs/pull-requests.md): after the push (a review's returned before); never fails the leg.
  if (ctx.opts.pr) {
    const pushed = implemented && Boolean(ctx.opts.push && ctx.deps.pushBranch);
    s.pullRequest = await pullRequestAfterLeg(ctx, { ...afterLeg(s, at, done), pushed });
  }
  return finish(s, implemented);
}

/** The leg's disposition on the stream (never dropped), its local record and its summary. */
function finish(s: LegState, implemented: boolean, why: string | null = null): LegOutcome {
  const { ctx, key, wt, result } = s;
  const { opts, deps } = ctx;
  if (why) s.reason = why;
  const disposition = implemented ? 'implemented' : 'failed';
  const exitCode = result?.exitCode ?? null;
  ctx.stream.push({
    workItemKey: key,
    disposition,
    ...(wt ? { sessionBranch: wt.branch } : {}),
    ...(exitCode !== null ? { exitCode } : {}),
  });
  const summary: LegSummary = {
    key,
    title: s.item.title,
    disposition,
    durationMs: result?.durationMs ?? deps.clock.now() - s.started,
    exitCode,
    reason: implemented ? null : (s.reason ?? 'failed'),
    costUsd: result?.costUsd ?? null,
    tokens: { in: result?.tokensIn ?? null, out: result?.tokensOut ?? null },
    sessionBranch: wt?.branch ?? null,
    ...(ctx.mode === 'review' ? { review: s.review } : {}),
    ...(opts.pr ? { pullRequest: s.pullRequest } : {}),
    ...(result?.check ? { check: result.check, attempts: result.attempts ?? 1 } : {}),
    ...(result?.network ? { network: result.network } : {}),
    ...(s.bestOf ? { bestOf: s.bestOf } : {}),
  };
  recordLeg(ctx.paths, {
    ...summary,
    startedAt: new Date(s.started).toISOString(),
    endedAt: new Date(deps.clock.now()).toISOString(),
    repo: wt ? repoOf(ctx, key) : null,
    base: wt?.headBefore ?? null,
    head: headOf(wt?.path),
  });
  deps.output.legFinished(summary);
  return { summary, implemented };
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
