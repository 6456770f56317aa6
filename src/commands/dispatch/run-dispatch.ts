// The eight dispatch commands: flags → the engine's typed options, the real client behind the
// engine's port, progress on stderr, the summary (or one JSON document) at the end, and the exit
// code the engine decided.
import { resolve } from 'node:path';
import type { DispatchCommand } from '../../contract/types.js';
import { runLeg } from '../../dispatch/agent/run-leg.js';
import { dispatchServiceOf } from '../../dispatch/api-service.js';
import { parseDuration } from '../../dispatch/duration.js';
import { runDispatch, type DispatchOptions, type RunSummary } from '../../dispatch/lifecycle.js';
import { systemClock } from '../../dispatch/ports.js';
import { buildPrompt } from '../../dispatch/prompt.js';
import { isHostedEnvironment } from '../../dispatch/hosted/execution.js';
import { readRunRecord, resolveStateDir } from '../../dispatch/state.js';
import { checkoutInPlace, commitsSince, prepareWorktree } from '../../dispatch/worktree.js';
import { createRunProgress, printRunSummary } from '../../ui/run-progress.js';
import { connect } from '../connect.js';
import type { Context } from '../context.js';
import { UsageError } from '../exit-codes.js';
import { requireProject, resolveBaseUrl, resolveToken } from '../settings.js';
import type { DispatchFlags } from './register.js';
import { agentChoice, legOptions } from './run-options.js';
import { openHosted } from './hosted-open.js';
import { wholeNumber } from '../flag-values.js';

const DEFAULT_HEARTBEAT = '60s';

/** Turns flags into the engine's options; every bad value is a one-line usage error. */
export function dispatchOptions(command: DispatchCommand, keys: string[], flags: DispatchFlags, ctx: Context, token: string): DispatchOptions {
  const heartbeat = ctx.env.SVC_HEARTBEAT_INTERVAL && !flags.heartbeatInterval ? ctx.env.SVC_HEARTBEAT_INTERVAL : (flags.heartbeatInterval ?? DEFAULT_HEARTBEAT);
  const lanes = {
    ...(flags.priority ? { priority: flags.priority } : {}),
    ...(flags.assignee ? { assignee: flags.assignee } : {}),
    ...(flags.sprint ? { sprint: flags.sprint } : {}),
    ...(flags.ancestor ? { ancestor: flags.ancestor } : {}),
    ...(flags.kind ? { kind: flags.kind } : {}),
  };
  return {
    command,
    keys,
    projectKey: requireProject(ctx, flags.project),
    baseUrl: resolveBaseUrl(ctx),
    repo: resolve(ctx.cwd, flags.repo ?? ctx.env.SVC_REPO ?? '.'),
    agent: agentChoice(flags, ctx, !flags.dryRun && !flags.hosted),
    maxCards: wholeNumber(flags.max, '--max') ?? null,
    ...legOptions(flags, ctx),
    ...(flags.idempotencyKey ? { idempotencyKey: flags.idempotencyKey } : {}),
    heartbeatIntervalMs: parseDuration(heartbeat, flags.heartbeatInterval ? '--heartbeat-interval' : 'SVC_HEARTBEAT_INTERVAL'),
    worktree: flags.worktree !== false,
    dryRun: Boolean(flags.dryRun),
    ...(Object.keys(lanes).length ? { lanes } : {}),
    retryFailed: Boolean(flags.retryFailed),
    secrets: [token, ...(ctx.env.SVC_RUN_TOKEN ? [ctx.env.SVC_RUN_TOKEN] : [])],
    env: ctx.env,
  };
}

/**
 * `continue RUN_ID`: the agent and flags of the original run (run.json `options`) where the user
 * passed none; flags still win. `--on-failure` arrives as `halt` when not given (the flag's
 * default), so `halt` counts as not given here.
 */
export function continueFlags(flags: DispatchFlags, recorded: Record<string, unknown> | undefined): DispatchFlags {
  if (!recorded) return flags;
  const out: DispatchFlags = { ...flags };
  const agent = recorded.agent as { agent?: unknown; agentCmd?: unknown; model?: unknown } | undefined;
  if (!flags.agent && !flags.agentCmd && agent && typeof agent === 'object') {
    if (typeof agent.agent === 'string') out.agent = agent.agent;
    if (typeof agent.agentCmd === 'string') out.agentCmd = agent.agentCmd;
    if (!flags.model && typeof agent.model === 'string') out.model = agent.model;
  }
  if (flags.onFailure === undefined && (recorded.onFailure === 'halt' || recorded.onFailure === 'continue')) {
    out.onFailure = recorded.onFailure;
  }
  if (flags.parallel === undefined && typeof recorded.parallel === 'number') out.parallel = String(recorded.parallel);
  if (flags.sendLogs === undefined && typeof recorded.sendLogs === 'boolean') out.sendLogs = recorded.sendLogs;
  if (flags.allowEmpty === undefined && recorded.allowEmpty === true) out.allowEmpty = true;
  if (flags.maxCost === undefined && typeof recorded.maxCostUsd === 'number') out.maxCost = String(recorded.maxCostUsd);
  if (flags.worktree !== false && recorded.worktree === false) out.worktree = false;
  const t = recorded.timeouts as Record<string, unknown> | undefined;
  const ms = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? `${Math.round(v)}ms` : undefined);
  if (t && typeof t === 'object') {
    if (flags.idleTimeout === undefined && ms(t.idleMs)) out.idleTimeout = ms(t.idleMs);
    if (flags.cardTimeout === undefined && ms(t.cardMs)) out.cardTimeout = ms(t.cardMs);
    if (flags.killGrace === undefined && ms(t.killGraceMs)) out.killGrace = ms(t.killGraceMs);
    if (flags.timeout === undefined && ms(t.runMs)) out.timeout = ms(t.runMs);
  }
  return out;
}

export async function runDispatchCommand(command: DispatchCommand, keys: string[], flags: DispatchFlags, ctx: Context): Promise<void> {
  if (isHostedEnvironment(ctx.env)) {
    // Inside a hosted container the run decides (op 26): its command, cards and scope.
    if (flags.hosted) throw new UsageError('--hosted opens a run for a hosted runner; inside a hosted run (SVC_RUN_ID) there is nothing to open');
    const { runHostedCommand } = await import('../hosted/run.js');
    const { printAttachPlan } = await import('../hosted/attach.js');
    await runHostedCommand(ctx, { invokedAs: command, keys, flags }, (c, h) => printAttachPlan(c, h, flags.push !== false));
    return;
  }
  const token = resolveToken(ctx);
  if (command === 'continue' && keys.length === 1) {
    const recorded = (() => {
      try {
        return readRunRecord(resolveStateDir(ctx.env), keys[0]!)?.options;
      } catch {
        return undefined;
      }
    })();
    flags = continueFlags(flags, recorded);
  }
  const opts = dispatchOptions(command, keys, flags, ctx, token);
  const api = connect(ctx, { interruptible: false });
  try {
    const service = dispatchServiceOf(api);
    const stateDir = resolveStateDir(ctx.env);
    if (flags.hosted) {
      const run = await openHosted(opts, { service, stateDir, openHostedRun: (body) => api.openDispatchRun(body) });
      if (ctx.out.json) return ctx.out.document(run);
      ctx.out.data(run.run.id);
      ctx.out.info(`Opened hosted run ${run.run.id} (${run.run.cards.length} cards)${run.created ? '' : ' (existing run for this idempotency key)'}; a hosted runner executes it.`);
      return;
    }
    // From here a signal winds the run down (agents stopped, the run closed) instead of cutting it.
    ctx.interrupts.handle?.('dispatch');
    const progress = createRunProgress(ctx.out);
    let summary: RunSummary;
    try {
      summary = await runDispatch(opts, {
        service, runLeg, prepareWorktree, checkoutInPlace, commitsSince, buildPrompt, clock: systemClock, stateDir,
        output: progress, signal: ctx.interrupts.signal,
      });
    } finally {
      progress.stop();
    }
    ctx.exitCode = summary.exitCode;
    if (ctx.out.json) return ctx.out.document(summary);
    if (summary.dryRun) return printDryRun(ctx, summary);
    printRunSummary(ctx.out, summary);
  } finally {
    await api.close();
  }
}

function printDryRun(ctx: Context, summary: RunSummary): void {
  ctx.out.info(summary.note);
  ctx.out.table(['CARD', 'TITLE', 'SKIP REASON'], summary.cards.map((c) => [c.key, c.title, c.skipReason ?? (c.gatedBy ? `gated by ${c.gatedBy}` : '')]));
}
