// What every fenced leg may reach besides what the user adds (docs/trust.md): the model API of
// the agent preset (docs/agents.md lists them), a base address the user pointed the preset at
// through its own variable, and the repository's git host.
import { originUrl } from '../git/run-git.js';
import type { AgentName } from '../agent/types.js';
import { canonicalHost, formatAllowEntry } from './allowlist.js';

/** The hosts each preset's model API answers on (docs/agents.md, "The network of a leg"). */
export const PRESET_HOSTS: Readonly<Record<AgentName, readonly string[]>> = {
  claude: ['api.anthropic.com', 'statsig.anthropic.com'],
  codex: ['api.openai.com', 'chatgpt.com'],
  gemini: ['generativelanguage.googleapis.com', 'cloudcode-pa.googleapis.com', 'oauth2.googleapis.com'],
  opencode: ['api.anthropic.com', 'api.openai.com', 'opencode.ai', 'models.dev'],
  aider: ['api.openai.com', 'api.anthropic.com', 'openrouter.ai'],
};

/** The variables a preset takes its model's address from: their host is allowed too. */
const BASE_URL_VARIABLES: Readonly<Record<AgentName, readonly string[]>> = {
  claude: ['ANTHROPIC_BASE_URL'],
  codex: ['OPENAI_BASE_URL'],
  gemini: ['GOOGLE_GEMINI_BASE_URL'],
  opencode: [],
  aider: ['OPENAI_API_BASE', 'ANTHROPIC_BASE_URL'],
};

/** The entry (`host:port`) of a URL, or null when it is not one. */
export function urlEntry(url: string): string | null {
  try {
    const u = new URL(url);
    const host = canonicalHost(u.hostname);
    if (!host) return null;
    const port = u.port
      ? Number(u.port)
      : u.protocol === 'https:'
        ? 443
        : u.protocol === 'http:'
          ? 80
          : u.protocol === 'ssh:'
            ? 22
            : u.protocol === 'git:'
              ? 9418
              : null;
    return formatAllowEntry({ kind: 'name', host, port });
  } catch {
    return null;
  }
}

/** The model hosts of `agent` (none for --agent-cmd), with the base address its variables name. */
export function agentHosts(agent: string | undefined, env: NodeJS.ProcessEnv): string[] {
  if (!agent || !Object.hasOwn(PRESET_HOSTS, agent)) return [];
  const own = BASE_URL_VARIABLES[agent as AgentName].map((v) => (env[v] ? urlEntry(env[v]!) : null)).filter((e): e is string => e !== null);
  return [...PRESET_HOSTS[agent as AgentName], ...own];
}

/** The host of the repository's `origin` (https or ssh, scp-like included), or null without one. */
export async function gitHost(repo: string): Promise<string | null> {
  const url = await originUrl(repo);
  if (!url) return null;
  const scp = /^(?:[^@/]+@)?([^:/]+):(?!\/)/.exec(url);
  if (!url.includes('://') && scp) {
    const host = canonicalHost(scp[1]!);
    return host ? `${host}:22` : null;
  }
  if (/^(https?|ssh|git):\/\//.test(url)) return urlEntry(url);
  return null;
}
