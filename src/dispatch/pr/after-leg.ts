// The engine's one call into pull requests, at the end of a leg (after its branch was pushed, or
// for a review after the agent spoke): which of the three writer calls fits the leg's mode, the
// body built and redacted, and the result recorded where everyone looks for it — the leg summary
// (`pullRequest`, hence `--json` and legs.jsonl), `<run>/pull-requests.jsonl`, a card-scoped run
// event, and one progress line. Never throws: a pull request that cannot be written is a warning,
// the leg stays what it was.
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { run } from '../process/run.js';
import type { Delivery, WorkItemDetail } from '../../contract/types.js';
import type { LegResult } from '../agent/types.js';
import type { LegContext } from '../leg-context.js';
import { createRedactor } from '../redact.js';
import { logPath } from '../state/folder.js';
import { fixCommentBody, pullRequestBody, reviewBody } from './body.js';
import { plainTailOfLog } from './final-message.js';
import type { PullRequestLeg, PullRequestRef } from './types.js';

/** One line of `<run>/pull-requests.jsonl` (read by reports): never a body, never a token. */
export interface PullRequestRecord extends PullRequestRef {
  key: string;
  at: string;
}

export function pullRequestsFile(runDir: string): string {
  return join(runDir, 'pull-requests.jsonl');
}

export interface AfterLegInput {
  item: WorkItemDetail;
  /** The repository the leg worked in (worktrees share its `origin`). */
  repo: string;
  branch: string;
  /** The commit the leg's branch started from (fix: what it changed since). */
  headBefore: string | null;
  /** Where the leg's commits are (the worktree). */
  worktree: string | null;
  result: LegResult;
  /** The leg's branch reached the remote (implement and fix need it; review never pushes). */
  pushed: boolean;
  /** The agent's final message when the leg already has it (a review's result); else its stream parser's, else its log's tail. */
  finalMessage?: string | null;
}

/** The delivery a leg of `mode` acts on: fix wants the failing one, others the open one. */
export function deliveryFor(item: WorkItemDetail, mode: LegContext['mode']): Delivery | null {
  const all = Array.isArray(item.deliveries) ? item.deliveries : [];
  const open = all.filter((d) => d.state === 'open');
  if (mode === 'fix') return open.find((d) => d.ci === 'failing') ?? open[0] ?? null;
  return open[0] ?? null;
}

async function commitsOf(worktree: string | null, headBefore: string | null): Promise<string[]> {
  if (!worktree || !headBefore) return [];
  const r = await run('git', ['-C', worktree, 'log', '--format=%h %s', `${headBefore}..HEAD`], { cwd: process.cwd(), maxBuffer: 1 << 20, timeoutMs: 0 });
  return r.code === 0 ? r.stdout.split('\n').filter(Boolean).slice(0, 50) : [];
}

export async function pullRequestAfterLeg(ctx: LegContext, input: AfterLegInput): Promise<PullRequestRef | null> {
  const { opts, deps } = ctx;
  const writer = deps.pullRequests;
  if (!opts.pr || !writer) return null;
  const { item, result } = input;
  const mode = ctx.mode;
  if (mode === 'review' ? result.outcome !== 'succeeded' : !input.pushed) return null;
  const secrets = opts.liveSecrets ? [...opts.secrets, ...opts.liveSecrets()] : opts.secrets;
  const redact = createRedactor(secrets);
  const leg: PullRequestLeg = {
    runId: ctx.runId,
    command: ctx.command,
    key: item.key,
    title: redact(item.title),
    repo: input.repo,
    branch: input.branch,
    durationMs: result.durationMs,
    tokens: { in: result.tokensIn ?? null, out: result.tokensOut ?? null },
    costUsd: result.costUsd ?? null,
    finalMessage:
      input.finalMessage !== undefined
        ? input.finalMessage
        : result.finalMessage !== undefined
          ? result.finalMessage
          : plainTailOfLog(logPath(ctx.paths, item.key)),
    delivery: deliveryFor(item, mode),
    draft: Boolean(opts.draft),
  };
  let ref: PullRequestRef;
  try {
    if (mode === 'review') {
      if (!leg.finalMessage) {
        deps.output.warn(`${item.key}: the review agent said nothing; no review posted`);
        return null;
      }
      ref = await writer.postReview(leg, reviewBody(leg, redact));
    } else if (mode === 'fix') {
      ref = await writer.commentOnFix(leg, fixCommentBody(leg, (await commitsOf(input.worktree, input.headBefore)).map(redact), redact));
    } else {
      ref = await writer.openOrUpdatePullRequest(leg, pullRequestBody(leg, redact));
    }
  } catch (error) {
    deps.output.warn(`${item.key}: pull request: ${redact(error instanceof Error ? error.message : String(error)).split('\n')[0]}`);
    return null;
  }
  record(ctx, item.key, ref, redact);
  return ref;
}

function record(ctx: LegContext, key: string, ref: PullRequestRef, redact: (s: string) => string): void {
  const { deps } = ctx;
  if (ref.action === 'hint') deps.output.info(redact(ref.hint ?? `${key}: no pull request written`));
  else {
    deps.output.info(`${key}: pull request ${ref.action}: ${ref.url ?? `#${ref.number ?? '?'}`}`);
    // The contract's events carry no link field: a card-scoped body is the one place a URL fits.
    ctx.stream.push({ workItemKey: key, body: `pull request ${ref.action}: ${ref.url ?? `#${ref.number ?? '?'}`}` });
  }
  try {
    const line: PullRequestRecord = { key, ...ref, at: new Date(deps.clock.now()).toISOString() };
    appendFileSync(pullRequestsFile(ctx.paths.dir), JSON.stringify(line) + '\n', { mode: 0o600 });
  } catch (error) {
    deps.output.warn(`${key}: could not record the pull request locally: ${error instanceof Error ? error.message : String(error)}`);
  }
}
