// One leg: the card's worktree, its agent, and the pipe from the agent's output to the local log
// (always) and to `body` events (only with --send-logs), redacted on the way. The leg's disposition
// is written to the event stream whatever happens, so it is never dropped.
import { closeSync, openSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { DispatchCommand, WorkItemDetail } from '../../contract/types.js';
import { agentEnv } from '../agent/env.js';
import { prepareAgentLeg, type AgentLeg } from '../agent-clone.js';
import { parserFor, resolveAgentCommand } from '../agent/presets.js';
import { streamOf } from '../agent/spend.js';
import type { LegResult } from '../agent/types.js';
import { BodyChunker, type EventStream } from '../event-stream.js';
import { headOf, recordLeg } from '../report/record.js';
import { alignWithHead, fetchDeliveryHead, prepareFixWorktree, prepareReviewWorktree, settleReview } from '../delivery-git.js';
import type { LegSummary, PreparedWorktree } from '../ports.js';
import { expectsCode } from '../prompt.js';
import { createRedactor, createStreamRedactor } from '../redact.js';
import type { LegMode } from '../select/types.js';
import { logPath, type RunPaths } from '../state.js';
import { StdoutTail, tailBytes } from './review-text.js';
import { pullRequestAfterLeg } from '../pr/after-leg.js';
import type { PullRequestRef } from '../pr/types.js';
import type { DispatchDeps, DispatchOptions } from './types.js';

/** What every leg of one run shares. */
export interface LegContext {
  runId: string;
  command: DispatchCommand;
  mode: LegMode;
  opts: DispatchOptions;
  deps: DispatchDeps;
  stream: EventStream;
  paths: RunPaths;
  /** Aborted when the run must stop its agents (signal, run closed, timeout). */
  signal: AbortSignal;
  /** Hears a leg's spend each time its stream reports more (`--max-cost` checks it mid-leg). */
  onSpend?(key: string, costUsd: number): void;
  /** Journals each agent's process group, for `svc runs recover` after a kill -9. */
  onAgentGroup?(key: string, event: 'start' | 'end', pgid: number): void;
}

export interface LegOutcome {
  summary: LegSummary;
  implemented: boolean;
}

/** No repository for a card (a hosted card that names no target repository). */
class NoRepositoryError extends Error {}

/** The repository `key` works in: `deps.repoFor` (hosted: the card's clone), else `opts.repo`. */
export function repoOf(ctx: Pick<LegContext, 'opts' | 'deps'>, key: string): string {
  if (!ctx.deps.repoFor) return ctx.opts.repo;
  const repo = ctx.deps.repoFor(key);
  if (!repo) throw new NoRepositoryError(`${key} names no target repository`);
  return repo;
}

/** Every secret in play now: the fixed ones and those minted since (hosted git tokens). */
export function secretsNow(opts: DispatchOptions): readonly string[] {
  return opts.liveSecrets ? [...opts.secrets, ...opts.liveSecrets()] : opts.secrets;
}

/** One line, redacted: what a failure reason may say (git's messages span lines). */
export function reasonLine(text: string, opts: DispatchOptions): string {
  const line = createRedactor(secretsNow(opts))(text)
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .join(' | ');
  return line.length > 300 ? `${line.slice(0, 297)}...` : line;
}

/**
 * Pushes an implemented leg's branch (`--push`). Null when pushed (or nothing to do), else the
 * leg's failure reason: "push failed: …", one line, no token.
 */
async function pushLeg(ctx: LegContext, key: string, branch: string): Promise<string | null> {
  const { opts, deps } = ctx;
  // A review never pushes, whatever --push or a hosted run's default says.
  if (ctx.mode === 'review' || !opts.push || !deps.pushBranch) return null;
  const repo = repoOf(ctx, key);
  try {
    await deps.pushBranch(repo, branch);
  } catch (error) {
    return `push failed: ${reasonLine(error instanceof Error ? error.message : String(error), opts) || 'error'}`;
  }
  deps.output.info(`${key}: pushed ${branch}`);
  // The one place where "branch pushed for leg" happens: pull requests hang off it.
  if (deps.onBranchPushed) {
    try {
      await deps.onBranchPushed({ runId: ctx.runId, key, branch, repo, mode: ctx.mode });
    } catch (error) {
      deps.output.warn(`${key}: after the push: ${reasonLine(error instanceof Error ? error.message : String(error), opts) || 'error'}`);
    }
  }
  return null;
}

async function worktreeFor(ctx: LegContext, key: string, item?: WorkItemDetail): Promise<PreparedWorktree> {
  const { opts, deps } = ctx;
  // fix and review work on the pull request's own head, fetched from origin (delivery-git.ts).
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

/** Runs whose agent-user warning was said (once per run, at its first agent). */
const warned = new WeakSet<DispatchOptions>();

/**
 * Runs an agent with `prompt` in `wt`, piping its output to `logFile` and (with send-logs) to body
 * events of `eventKey` (undefined: run-scoped). Shared by the legs and run_scope's close-out.
 */
export async function runAgent(
  ctx: LegContext,
  wt: PreparedWorktree,
  key: string,
  prompt: string,
  logFile: string,
  eventKey: string | undefined,
  collect?: (chunk: Buffer) => void,
): Promise<LegResult> {
  const user = ctx.opts.agentUser;
  if (!user) {
    if (ctx.opts.agentUserWarning && !warned.has(ctx.opts)) {
      warned.add(ctx.opts);
      ctx.deps.output.warn(ctx.opts.agentUserWarning);
    }
    return runAgentIn(ctx, wt, key, prompt, logFile, eventKey, null, collect);
  }
  // --agent-user: the agent works in a clone of its own, as that user; its branch comes back here.
  const leg = await prepareAgentLeg({ user, repo: repoOf(ctx, key), key, wt, privateDir: ctx.paths.dir });
  const result = await runAgentIn(ctx, wt, key, prompt, logFile, eventKey, leg, collect);
  try {
    await leg.collect();
  } catch (error) {
    // The clone is kept: it holds the only copy of whatever did not come back.
    const why = `could not bring back the agent's work: ${reasonLine(error instanceof Error ? error.message : String(error), ctx.opts)}`;
    ctx.deps.output.warn(`${key}: ${why} (its clone is kept at ${leg.workdir})`);
    return result.outcome === 'succeeded' ? { ...result, outcome: 'failed', reason: why } : result;
  }
  await leg.dispose().catch(() => ctx.deps.output.warn(`${key}: could not remove the agent's folder beside ${leg.workdir}`));
  return result;
}

async function runAgentIn(
  ctx: LegContext,
  wt: PreparedWorktree,
  key: string,
  prompt: string,
  logFile: string,
  eventKey: string | undefined,
  leg: AgentLeg | null,
  collect?: (chunk: Buffer) => void,
): Promise<LegResult> {
  const { opts, deps } = ctx;
  const promptFile = leg?.promptFile ?? join(ctx.paths.prompts, `${key}.md`);
  const workdir = leg?.workdir ?? wt.path;
  const command = resolveAgentCommand(opts.agent, {
    prompt_file: promptFile, key, workdir, branch: wt.branch, run_id: ctx.runId, prompt,
  });
  // One redactor per stream: interleaved stdout and stderr must not cut a token in either (a
  // newline on stderr would otherwise end the line holding half of a token from stdout).
  const redactors = { stdout: createStreamRedactor(secretsNow(opts)), stderr: createStreamRedactor(secretsNow(opts)) };
  // A secret minted after the stream redactor was built (a refreshed git token) is caught by a
  // second pass over every emitted piece; rebuilt only when the list grows.
  let late: { count: number; redact: (text: string) => string } | null = null;
  const lateRedact = (text: string): string => {
    if (!opts.liveSecrets || text.length === 0) return text;
    const now = secretsNow(opts);
    if (!late || late.count !== now.length) late = { count: now.length, redact: createRedactor(now) };
    return late.redact(text);
  };
  const log = openSync(logFile, 'a', 0o600);
  const chunker = opts.sendLogs
    ? new BodyChunker((body) => ctx.stream.push({ ...(eventKey ? { workItemKey: eventKey } : {}), body }))
    : null;
  // Gathered output goes out about as often as the stream flushes, not per agent write.
  const ticker = chunker ? setInterval(() => chunker.flush(), opts.flushIntervalMs ?? 1000) : null;
  const sink = (raw: string): void => {
    const text = lateRedact(raw);
    if (text.length === 0) return;
    writeSync(log, text);
    chunker?.write(text);
  };
  const parser = parserFor(command);
  try {
    return await deps.runLeg({
      argv: command.argv,
      cwd: workdir,
      env: (leg ? leg.env : (e: Record<string, string>) => e)(agentEnv(opts.env, {
        SVC_CARD_KEY: key, SVC_RUN_ID: ctx.runId, SVC_PROMPT_FILE: promptFile, SVC_WORKDIR: workdir, SVC_BRANCH: wt.branch,
      })),
      ...(leg ? { user: leg.user } : {}),
      prompt,
      promptVia: command.promptVia,
      promptFile,
      idleTimeoutMs: opts.timeouts.idleMs,
      cardTimeoutMs: opts.timeouts.cardMs,
      killGraceMs: opts.timeouts.killGraceMs,
      ...(parser ? { parser } : {}),
      onOutput: (chunk, name) => {
        if (name === 'stdout') {
          collect?.(chunk);
          // run-leg fed the parser first: the spend it reports now is the leg's so far.
          const cost = parser?.usage().costUsd;
          if (cost !== undefined) ctx.onSpend?.(key, cost);
        }
        sink(redactors[name].push(chunk));
      },
      ...(ctx.onAgentGroup ? { onGroup: (event: 'start' | 'end', pgid: number) => ctx.onAgentGroup!(key, event, pgid) } : {}),
      signal: ctx.signal,
    });
  } finally {
    if (ticker) clearInterval(ticker);
    sink(redactors.stdout.flush());
    sink(redactors.stderr.flush());
    chunker?.flush();
    closeSync(log);
  }
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
  try {
    wt = await worktreeFor(ctx, key, item);
    stream.push({ workItemKey: key, disposition: 'running', sessionBranch: wt.branch });
    deps.output.legStarted({ key, title: item.title, index, total, branch: wt.branch });
    const code = expectsCode(item) && ctx.mode !== 'review';
    const prompt = deps.buildPrompt(item, {
      branch: wt.branch, runId: ctx.runId, mode: ctx.mode, expectsCode: code,
      ...(opts.doneStatuses ? { doneStatuses: opts.doneStatuses } : {}),
    });
    // A review's text: its stream parser's final message, else the tail of a plain command's stdout.
    const plainTail = ctx.mode === 'review' && !streamOf(opts.agent) ? new StdoutTail() : null;
    result = await runAgent(ctx, wt, key, prompt, logPath(ctx.paths, key), key, plainTail ? (c) => plainTail.push(c) : undefined);
    reason = result.reason;
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
        pullRequest = await pullRequestAfterLeg(ctx, {
          item, repo: repoOf(ctx, key), branch: wt.branch, headBefore: wt.headBefore, worktree: wt.path, result, pushed: false, finalMessage: review,
        });
      }
      return finish(implemented);
    }
    // The "no changes" rule: a card that expects code must leave a commit (unless --allow-empty).
    if (implemented && code && !opts.allowEmpty && (await deps.commitsSince(wt.path, wt.headBefore)) === 0) {
      implemented = false;
      reason = 'no changes';
    }
    if (implemented) {
      const refused = await pushLeg(ctx, key, wt.branch);
      if (refused) {
        implemented = false;
        reason = refused;
      }
    }
    // Pull requests (issue 17): after the push (a review's returned above); never fails the leg.
    if (opts.pr) {
      const pushed = implemented && Boolean(opts.push && deps.pushBranch);
      pullRequest = await pullRequestAfterLeg(ctx, {
        item, repo: repoOf(ctx, key), branch: wt.branch, headBefore: wt.headBefore, worktree: wt.path, result, pushed,
      });
    }
    return finish(implemented);
  } catch (error) {
    reason =
      error instanceof NoRepositoryError
        ? error.message
        : `${wt ? 'leg' : 'worktree'}: ${createRedactor(secretsNow(opts))(error instanceof Error ? error.message : String(error))}`;
    return finish(false);
  }

  function finish(implemented: boolean): LegOutcome {
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
      reason: implemented ? null : reason ?? 'failed',
      costUsd: result?.costUsd ?? null,
      tokens: { in: result?.tokensIn ?? null, out: result?.tokensOut ?? null },
      sessionBranch: wt?.branch ?? null,
      ...(ctx.mode === 'review' ? { review } : {}),
      ...(opts.pr ? { pullRequest } : {}),
    };
    recordLeg(ctx.paths, {
      ...summary, startedAt: new Date(started).toISOString(), endedAt: new Date(deps.clock.now()).toISOString(),
      repo: wt ? repoOf(ctx, key) : null, base: wt?.headBefore ?? null, head: headOf(wt?.path),
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

/** The close-out prompt (op 28), run once in the scope's branch after the legs of run_scope. */
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
    branch: wt.branch, runId: ctx.runId, mode: 'implement', expectsCode: false,
    closeOut: { prompt: closeOut.prompt, landedKeys: closeOut.landedKeys },
  });
  const started = ctx.deps.clock.now();
  const ran = await runAgent(ctx, wt, scope.key, prompt, join(ctx.paths.logs, `${scope.key}.close-out.log`), undefined);
  const refused = ran.outcome === 'succeeded' ? await pushLeg(ctx, scope.key, wt.branch) : null;
  const result: LegResult = refused ? { ...ran, outcome: 'failed', reason: refused } : ran;
  recordLeg(ctx.paths, {
    key: scope.key, title: scope.title, disposition: result.outcome === 'succeeded' ? 'implemented' : 'failed',
    durationMs: result.durationMs, exitCode: result.exitCode, reason: result.outcome === 'succeeded' ? null : result.reason ?? 'failed',
    costUsd: result.costUsd ?? null, tokens: { in: result.tokensIn ?? null, out: result.tokensOut ?? null }, sessionBranch: wt.branch,
    startedAt: new Date(started).toISOString(), endedAt: new Date(ctx.deps.clock.now()).toISOString(),
    repo: repoOf(ctx, scope.key), base: wt.headBefore, head: headOf(wt.path), closeOut: true,
  });
  return result;
}
