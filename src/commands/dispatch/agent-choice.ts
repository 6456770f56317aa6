// Which agent a dispatch runs: the flags, else the agent a hosted run was opened with, else the
// stored choice. One rule for local and hosted runs, so they cannot drift apart.
import { AGENT_NAMES, isAgentName, type AgentChoice } from '../../dispatch/agent/presets.js';
import type { Context } from '../context.js';
import { UsageError } from '../exit-codes.js';

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
