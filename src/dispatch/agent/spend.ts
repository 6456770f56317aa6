// Which agents say what they spend. Only a stream that carries a price can stop a run at
// `--max-cost`: Claude Code (`total_cost_usd`) and opencode (`cost` per step). Codex and Gemini
// report tokens but no price, aider and a plain `--agent-cmd` report nothing, so a cost cap over
// them would silently never stop the run: it is refused up front instead.
import { AGENT_PRESETS, isAgentName, type AgentChoice } from './presets.js';
import type { StreamFormat } from './types.js';

const PRICED: readonly StreamFormat[] = ['claude-stream-json', 'opencode-json'];

/** The stream format a choice's output is parsed with (`--agent-format` or the preset's), or null. */
export function streamOf(choice: AgentChoice): StreamFormat | null {
  if (choice.stream) return choice.stream;
  if (choice.agentCmd !== undefined) return null;
  return choice.agent && isAgentName(choice.agent) ? AGENT_PRESETS[choice.agent].stream : null;
}

/** Whether the agent reports a spend in dollars as it runs. */
export function reportsSpend(choice: AgentChoice): boolean {
  const format = streamOf(choice);
  return format !== null && PRICED.includes(format);
}

/** `--agent-format` names: the preset whose stream a custom command speaks. */
export const AGENT_FORMATS: Readonly<Record<string, StreamFormat>> = {
  claude: 'claude-stream-json',
  codex: 'codex-json',
  gemini: 'gemini-stream-json',
  opencode: 'opencode-json',
};
