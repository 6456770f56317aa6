// Which agent a dispatch runs and how its legs run: one rule for local and hosted runs, so they
// cannot drift apart.
import { AGENT_NAMES, isAgentName, type AgentChoice } from '../../dispatch/agent/presets.js';
import type { Context } from '../context.js';
import { UsageError } from '../exit-codes.js';
import { parseDuration } from '../../dispatch/duration.js';
import { resolveMaxWaitMs } from '../settings.js';
import type { DispatchOptions } from '../../dispatch/lifecycle.js';
import { usd, wholeNumber } from '../flag-values.js';

export interface AgentFlags {
  agent?: string;
  agentCmd?: string;
  model?: string;
}

/**
 * `opened` is a hosted run's own choice: its agent counts when it names a preset (`custom` means
 * it was opened with --agent-cmd, which the run does not carry).
 */
export function agentChoice(flags: AgentFlags, ctx: Context, required: boolean, opened?: { agent: string | null; model: string | null }): AgentChoice {
  if (flags.agent && flags.agentCmd) throw new UsageError('pass either --agent or --agent-cmd, not both');
  const fromRun = opened?.agent && isAgentName(opened.agent) ? opened.agent : undefined;
  const agent = flags.agent ?? (flags.agentCmd ? undefined : (fromRun ?? ctx.config().get('agent')));
  const model = flags.model ?? opened?.model ?? ctx.config().get('model');
  if (agent && !isAgentName(agent)) throw new UsageError(`unknown agent '${agent}'; presets: ${AGENT_NAMES.join(', ')} (or --agent-cmd "CMD ARGS")`);
  if (required && !agent && !flags.agentCmd) {
    const named = opened?.agent ? ` (the run names '${opened.agent}')` : '';
    throw new UsageError(`no agent${named}: pass --agent claude|codex|aider|gemini|opencode or --agent-cmd "CMD ARGS" (or \`svc config set agent NAME\`)`);
  }
  return { ...(agent ? { agent } : {}), ...(flags.agentCmd ? { agentCmd: flags.agentCmd } : {}), ...(model ? { model } : {}) };
}

/** The flags of how legs run, shared by local and hosted runs. */
export interface LegFlags {
  onFailure?: 'halt' | 'continue';
  parallel?: string;
  sendLogs?: boolean;
  allowEmpty?: boolean;
  timeout?: string;
  idleTimeout?: string;
  cardTimeout?: string;
  killGrace?: string;
  maxCost?: string;
}

/** How legs run: failures, parallelism, logs, timeouts and spend, with their defaults. */
export function legOptions(flags: LegFlags, ctx: Context) {
  return {
    onFailure: flags.onFailure ?? 'halt',
    parallel: wholeNumber(flags.parallel, '--parallel') ?? ctx.config().get('parallel') ?? 1,
    sendLogs: flags.sendLogs ?? ctx.config().get('sendLogs') ?? false,
    allowEmpty: Boolean(flags.allowEmpty),
    timeouts: {
      idleMs: parseDuration(flags.idleTimeout ?? '15m', '--idle-timeout'),
      cardMs: parseDuration(flags.cardTimeout ?? '60m', '--card-timeout'),
      killGraceMs: parseDuration(flags.killGrace ?? '10s', '--kill-grace'),
      runMs: flags.timeout ? parseDuration(flags.timeout, '--timeout') : null,
    },
    maxCostUsd: usd(flags.maxCost, '--max-cost') ?? null,
    maxWaitMs: resolveMaxWaitMs(ctx),
  } satisfies Partial<DispatchOptions>;
}
