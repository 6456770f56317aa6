// Best-of-N (docs/dispatch.md): a card's leg run as N attempts side by side, each the leg
// machinery of its own (a worktree on svc/<KEY>-attempt-<n> made from the run's base, its own agent
// side: as root a uid and a clone), with SVC_ATTEMPT=n and the n-th `--agent`. The repository's check
// picks: the first attempt whose work would land wins (attempts ending in the same millisecond: the
// smallest diff), its commit goes on svc/<KEY>, and the others are stopped unless --all-attempts.
// The card holds `ctx.slots` slots of --parallel (scheduler.ts): that many attempts run at once.
import { appendFileSync } from 'node:fs';
import type { WorkItemDetail } from '../../contract/types.js';
import type { AgentChoice } from '../agent/presets.js';
import type { LegResult } from '../agent/types.js';
import { adoptCommit, diffLines } from '../git/adopt.js';
import { branchFor } from '../git/run-git.js';
import { headCommit } from '../git/worktree.js';
import type { AttemptSummary, BestOf, PreparedWorktree } from '../ports.js';
import { createRedactor } from '../redact.js';
import { Slots } from '../slots.js';
import { logPath } from '../state/folder.js';
import { protectedPaths } from '../workflow/policy.js';
import { discardAgentSide, openAgentSide, runLegAgent } from './agent-run.js';
import { reasonLine, repoOf, secretsNow, workflowOf, type LegContext } from '../leg-context.js';
import type { DispatchOptions } from './types.js';

/** The key an attempt's worktree, branch (`svc/<KEY>-attempt-<n>`), log and agent folder are named by. */
export const attemptKey = (key: string, n: number): string => `${key}-attempt-${n}`;

/** How many attempts `key`'s leg runs: --attempts over the workflow's; a fix or review runs one. */
export function attemptsOf(ctx: Pick<LegContext, 'opts' | 'deps' | 'mode'>, key: string): number {
  if (ctx.mode !== 'implement') return 1;
  return ctx.opts.attempts ?? workflowOf(ctx, key)?.attempts ?? 1;
}

/** The agent attempt `n` runs: the n-th `--agent`, cycling. */
export function agentOf(opts: Pick<DispatchOptions, 'agent' | 'agents'>, n: number): AgentChoice {
  const list = opts.agents?.length ? opts.agents : [opts.agent];
  return list[(n - 1) % list.length]!;
}

/**
 * Why a leg's work may not land though its agent succeeded (a protected path changed, no commit
 * where code was expected), or null. The rules of a card's leg, applied to each attempt too.
 */
export async function workRefusal(ctx: LegContext, key: string, wt: PreparedWorktree, expectsCode: boolean): Promise<string | null> {
  const changed = await ctx.deps.changedPaths(wt.path, wt.headBefore, protectedPaths(workflowOf(ctx, key)));
  if (changed.length) return `changed a protected path: ${changed.slice(0, 5).join(', ')}${changed.length > 5 ? ` (and ${changed.length - 5} more)` : ''}`;
  if (expectsCode && !ctx.opts.allowEmpty && (await ctx.deps.commitsSince(wt.path, wt.headBefore)) === 0) return 'no changes';
  return null;
}

/** What the card's leg makes of its attempts: the result it reports and the list the report shows. */
export interface AttemptsOutcome {
  implemented: boolean;
  /** The winner's result with every attempt's spend added up (a failed leg's: the last check's). */
  result: LegResult;
  bestOf: BestOf;
}

interface Tried {
  summary: AttemptSummary;
  implemented: boolean;
  result: LegResult | null;
  head: string | null;
  endedAt: number;
}

/** What an attempt needs of its card's leg: the prompt for a branch, and whether code is expected. */
interface CardLeg {
  item: WorkItemDetail;
  promptFor(branch: string): string;
  expectsCode: boolean;
}

/**
 * Runs `item`'s attempts and puts the winner's commit on the card's worktree `card` (svc/<KEY>).
 * Never throws for an attempt: a failed attempt is a line of the list.
 */
export async function runAttempts(
  ctx: LegContext,
  item: WorkItemDetail,
  card: PreparedWorktree,
  count: number,
  promptFor: (branch: string) => string,
  expectsCode: boolean,
): Promise<AttemptsOutcome> {
  const key = item.key;
  const started = ctx.deps.clock.now();
  // The CLI and the workflow's parser refuse attempts without a check; a caller of the engine that
  // did not gets a failed leg, never a winner picked by who was fastest.
  const verify = workflowOf(ctx, key)?.verify ?? null;
  if (!verify) {
    const why = `no check to pick one of ${count} attempts: set verify in .svc/workflow.yml or pass --verify CMD`;
    return { implemented: false, result: failedResult(why), bestOf: { winner: null, why, attempts: [] } };
  }
  const note = cardLog(ctx, key);
  const { tried, won } = await race(ctx, { item, promptFor, expectsCode }, count, note);
  const why = won ? whyWon(won, tried, verify) : `no attempt of ${count} passed the check`;
  note(why);
  if (ctx.opts.sendLogs) ctx.stream.push({ workItemKey: key, body: `${key}: ${why}` });
  const refused = won ? await adopt(ctx, key, card, won) : failedReason(tried);
  await pushLosers(ctx, key, tried, won);
  const implemented = won !== null && refused === null;
  return {
    implemented,
    result: { ...combined(tried, won), outcome: implemented ? 'succeeded' : 'failed', reason: refused, durationMs: ctx.deps.clock.now() - started },
    bestOf: { winner: implemented ? won!.summary.attempt : null, why, attempts: tried.map((t) => t.summary) },
  };
}

/**
 * Starts the attempts in order as the card's slots allow and lets them race: the first whose work
 * would land wins (the same millisecond: the smallest diff), and the others are stopped then.
 */
async function race(ctx: LegContext, leg: CardLeg, count: number, note: (line: string) => void): Promise<{ tried: Tried[]; won: Tried | null }> {
  const key = leg.item.key;
  const opts = agentOptions(ctx.opts, count);
  const stops = new Map<number, AbortController>();
  const spend = new Map<number, number>();
  const tried: Tried[] = [];
  let winner: Tried | null = null;
  const decided = () => winner !== null && !ctx.opts.allAttempts;

  const attempt = async (n: number): Promise<Tried> => {
    const stop = new AbortController();
    stops.set(n, stop);
    const actx: LegContext = {
      ...ctx,
      opts: opts[n - 1]!,
      attempt: n,
      signal: AbortSignal.any([ctx.signal, stop.signal]),
      // --max-cost hears the card's spend over every attempt at once.
      onSpend: (_k, usd) => {
        spend.set(n, usd);
        ctx.onSpend?.(key, sum([...spend.values()]));
      },
    };
    const t = await runOne(actx, leg, n);
    if (t.result?.costUsd !== undefined) spend.set(n, t.result.costUsd);
    // Stopped by the winner, unless it had already failed the check on its own.
    if (!t.implemented && stop.signal.aborted && !ctx.signal.aborted && winner && t.summary.check !== 'failed') {
      t.summary.disposition = 'stopped';
      t.summary.reason = `stopped: attempt ${winner.summary.attempt} won`;
    }
    note(`attempt ${n}: ${t.summary.disposition}${t.summary.reason ? ` (${t.summary.reason})` : ''}, check ${t.summary.check}`);
    if (t.implemented && (!winner || (t.endedAt === winner.endedAt && (t.summary.diffLines ?? 0) < (winner.summary.diffLines ?? 0)))) winner = t;
    const w = winner?.summary.attempt;
    if (decided()) for (const [m, s] of stops) if (m !== w) s.abort(new Error(`attempt ${w} won`));
    return t;
  };

  const slots = new Slots(Math.max(1, Math.min(ctx.slots ?? 1, count)));
  const runs: Promise<Tried>[] = [];
  for (let n = 1; n <= count; n++) {
    const release = await slots.acquire();
    if (decided() || ctx.signal.aborted) {
      release();
      tried.push(notStarted(n, opts[n - 1]!.agent, winner));
      continue;
    }
    note(`attempt ${n} of ${count}: ${agentName(opts[n - 1]!.agent)} on svc/${attemptKey(key, n)} (its log: ${attemptKey(key, n)}.log)`);
    runs.push(attempt(n).finally(release));
  }
  tried.push(...(await Promise.all(runs)));
  tried.sort((a, b) => a.summary.attempt - b.summary.attempt);
  return { tried, won: winner };
}

/** Puts the winner's commit on svc/<KEY> (git/adopt.ts). Null when it is there, else why not. */
async function adopt(ctx: LegContext, key: string, card: PreparedWorktree, won: Tried): Promise<string | null> {
  const n = won.summary.attempt;
  if (!won.head) return `attempt ${n}'s commit could not be read`;
  try {
    const { kept, stashed } = await adoptCommit(card.path, key, won.head);
    if (kept) ctx.deps.output.warn(`${key}: ${card.branch} had commits attempt ${n}'s lacks; kept on ${kept}`);
    if (stashed) ctx.deps.output.warn(`${key}: uncommitted files in ${card.path} are on the stash (git stash list there)`);
    return null;
  } catch (error) {
    return `could not put attempt ${n}'s commit on ${card.branch}: ${reasonLine(error instanceof Error ? error.message : String(error), ctx.opts)}`;
  }
}

/** The card's result of its attempts: the winner's exit and check (else the last check's), the spend of all. */
function combined(tried: Tried[], won: Tried | null): Omit<LegResult, 'outcome' | 'reason' | 'durationMs'> {
  const last = won?.result ?? [...tried].reverse().find((t) => t.result?.check)?.result ?? tried.find((t) => t.result)?.result ?? null;
  const total = (pick: 'costUsd' | 'tokensIn' | 'tokensOut') => {
    const xs = tried.map((t) => t.result?.[pick]).filter((x): x is number => x !== undefined);
    return xs.length ? { [pick]: sum(xs) } : {};
  };
  return {
    exitCode: last?.exitCode ?? null,
    signal: last?.signal ?? null,
    ...total('costUsd'),
    ...total('tokensIn'),
    ...total('tokensOut'),
    ...(last?.check ? { check: last.check, attempts: last.attempts ?? 1 } : {}),
  };
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

function failedResult(reason: string): LegResult {
  return { exitCode: null, signal: null, outcome: 'failed', reason, durationMs: 0 };
}

/** One attempt, from its worktree to whether its work would land. Never throws. */
async function runOne(ctx: LegContext, leg: CardLeg, n: number): Promise<Tried> {
  const { opts, deps } = ctx;
  const key = leg.item.key;
  const started = deps.clock.now();
  let wt: PreparedWorktree | null = null;
  let result: LegResult | null = null;
  let reason: string | null;
  const prompt = leg.promptFor(branchFor(attemptKey(key, n)));
  // As a card's leg does: the agent's side (a uid, its folder) is made while git makes the worktree.
  let side = opts.agentUser ? openAgentSide(ctx, key, prompt) : undefined;
  side?.catch(() => undefined);
  try {
    wt = await deps.prepareWorktree({
      repo: repoOf(ctx, key),
      key: attemptKey(key, n),
      ...(opts.baseRef ? { baseRef: opts.baseRef } : {}),
      ...(opts.worktreeRoot ? { root: opts.worktreeRoot } : {}),
    });
    const given = side;
    side = undefined;
    result = await runLegAgent(ctx, wt, key, prompt, logPath(ctx.paths, attemptKey(key, n)), key, undefined, given);
    reason = result.outcome === 'succeeded' ? await workRefusal(ctx, key, wt, leg.expectsCode) : (result.reason ?? 'failed');
  } catch (error) {
    if (side) await discardAgentSide(side);
    reason = `${wt ? 'attempt' : 'worktree'}: ${createRedactor(secretsNow(opts))(error instanceof Error ? error.message : String(error))}`;
  }
  const implemented = reason === null;
  const head = wt ? await headCommit(wt.path).catch(() => null) : null;
  const lines = wt && head ? await diffLines(wt.path, wt.headBefore).catch(() => null) : null;
  return {
    implemented,
    result,
    head,
    endedAt: deps.clock.now(),
    summary: {
      attempt: n,
      agent: agentName(opts.agent),
      branch: wt?.branch ?? null,
      disposition: implemented ? 'implemented' : 'failed',
      reason,
      check: result?.check?.status ?? 'none',
      durationMs: result?.durationMs ?? deps.clock.now() - started,
      costUsd: result?.costUsd ?? null,
      diffLines: lines,
    },
  };
}

/** One options object per attempt's agent (one per distinct choice: a run's once-only warnings stay once). */
function agentOptions(opts: DispatchOptions, count: number): DispatchOptions[] {
  if (!opts.agents?.length) return Array.from({ length: count }, () => opts);
  const each = opts.agents.map((agent) => ({ ...opts, agent }));
  return Array.from({ length: count }, (_, i) => each[i % each.length]!);
}

const agentName = (choice: AgentChoice) => `${choice.agent ?? 'command'}${choice.model ? ` (${choice.model})` : ''}`;

function notStarted(n: number, choice: AgentChoice, winner: Tried | null): Tried {
  return {
    implemented: false,
    result: null,
    head: null,
    endedAt: 0,
    summary: {
      attempt: n,
      agent: agentName(choice),
      branch: null,
      disposition: 'stopped',
      reason: winner ? `not started: attempt ${winner.summary.attempt} won` : 'not started: the run stopped',
      check: 'none',
      durationMs: 0,
      costUsd: null,
      diffLines: null,
    },
  };
}

function whyWon(won: Tried, tried: Tried[], verify: string | null): string {
  const n = won.summary.attempt;
  const check = verify ? `the check (\`${verify}\`)` : 'the check';
  const tied = tried.filter((t) => t !== won && t.implemented && t.endedAt === won.endedAt);
  const tie = tied.length
    ? `; attempt${tied.length > 1 ? 's' : ''} ${tied.map((t) => t.summary.attempt).join(', ')} passed at the same moment, its diff is the smallest (${won.summary.diffLines ?? 0} lines)`
    : '';
  return `attempt ${n} won: the first to pass ${check}${tie}`;
}

function failedReason(tried: Tried[]): string {
  const each = tried.map((t) => `${t.summary.attempt}: ${t.summary.reason ?? t.summary.disposition}`).join('; ');
  return `no attempt passed (${each.length > 240 ? `${each.slice(0, 237)}...` : each})`;
}

/** --push-attempts: the losers' branches go to origin too, as they are (no pull request). */
async function pushLosers(ctx: LegContext, key: string, tried: Tried[], won: Tried | null): Promise<void> {
  const { opts, deps } = ctx;
  if (!opts.pushAttempts || !opts.push || !deps.pushBranch) return;
  for (const t of tried) {
    if (t === won || !t.summary.branch || !t.head) continue;
    try {
      await deps.pushBranch(repoOf(ctx, key), t.summary.branch);
      deps.output.info(`${key}: pushed ${t.summary.branch}`);
    } catch (error) {
      deps.output.warn(`${key}: could not push ${t.summary.branch}: ${reasonLine(error instanceof Error ? error.message : String(error), opts)}`);
    }
  }
}

/** svc's own lines in the card's log (`svc logs RUN KEY`): which attempt ran where, and who won. */
function cardLog(ctx: LegContext, key: string): (line: string) => void {
  const file = logPath(ctx.paths, key);
  const redact = createRedactor(secretsNow(ctx.opts));
  return (line) => {
    try {
      appendFileSync(file, redact(`[svc] ${line}\n`), { mode: 0o600 });
    } catch {
      // The summary and the report say it too.
    }
  };
}
