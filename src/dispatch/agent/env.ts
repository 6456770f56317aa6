// The agent's environment (docs/agents.md) is an allowlist: the basics a program needs to run, the
// variables of its preset, the names the user gave (`--agent-env NAME`, the workflow's `env:`), and
// the SVC_* variables that describe its card. Nothing else of svc's environment reaches it. The
// agent is an arbitrary program under the control of a model: a token in its environment is a
// token in its transcript, and a blocklist never knows every CI engine's or cloud's name for one.
// docs/agents.md lists the names; every agent and every workflow step gets its environment here.
import type { AgentEnvExtra, AgentName } from './types.js';

/** What any program expects: where things are, who it is, its language, terminal and clock. */
const BASICS = new Set([
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'LANG',
  'LANGUAGE',
  'TERM',
  'COLORTERM',
  'NO_COLOR',
  'TZ',
  'TMPDIR',
  'TMP',
  'TEMP',
  'CI',
  'XDG_CONFIG_HOME',
  'XDG_CACHE_HOME',
  'XDG_DATA_HOME',
  'XDG_STATE_HOME',
  'XDG_RUNTIME_DIR',
  'XDG_CONFIG_DIRS',
  'XDG_DATA_DIRS',
  // Certificates of a network that inspects TLS: without them no model API answers.
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'NODE_EXTRA_CA_CERTS',
  'REQUESTS_CA_BUNDLE',
  // Where toolchains are installed (an image's Rust, Java, Go, Python, Node): paths, which a
  // workflow's setup and verify need as much as the agent does.
  'JAVA_HOME',
  'GOROOT',
  'GOPATH',
  'CARGO_HOME',
  'RUSTUP_HOME',
  'RUSTUP_TOOLCHAIN',
  'VIRTUAL_ENV',
  'PYTHONPATH',
  'PYENV_ROOT',
  'NVM_DIR',
  'NODE_PATH',
  'DOTNET_ROOT',
  'GRADLE_USER_HOME',
  'MAVEN_HOME',
  'ANDROID_HOME',
  'ANDROID_SDK_ROOT',
  'PLAYWRIGHT_BROWSERS_PATH',
  'LD_LIBRARY_PATH',
  'PKG_CONFIG_PATH',
  // Git's identity and where its configuration is: names, never a credential (the agent's commits
  // read as the user's). GIT_TERMINAL_PROMPT=0 keeps an agent's git from waiting on a prompt.
  'GIT_AUTHOR_NAME',
  'GIT_AUTHOR_EMAIL',
  'GIT_COMMITTER_NAME',
  'GIT_COMMITTER_EMAIL',
  'GIT_CONFIG_GLOBAL',
  'GIT_CONFIG_SYSTEM',
  'GIT_CONFIG_NOSYSTEM',
  'GIT_TERMINAL_PROMPT',
]);

/** The locale's categories, `LC_ALL`, `LC_CTYPE`, …. */
const LOCALE = /^LC_[A-Z_]+$/;

/**
 * A proxy the network needs (corporate, a sandbox's). Passed on unless its URL carries a password,
 * which is a credential like any other (`--agent-env HTTPS_PROXY` passes it).
 */
const PROXIES = new Set(['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY', 'NO_PROXY', 'http_proxy', 'https_proxy', 'all_proxy', 'no_proxy']);

/** Names and prefixes (ending in `_`) a preset's agent reads: its model keys, endpoints and switches. */
export const PRESET_ENV: Readonly<Record<AgentName, readonly string[]>> = {
  claude: [
    'ANTHROPIC_',
    'CLAUDE_CODE_',
    'CLAUDE_CONFIG_DIR',
    'DISABLE_AUTOUPDATER',
    'DISABLE_TELEMETRY',
    'DISABLE_ERROR_REPORTING',
    'DISABLE_NON_ESSENTIAL_MODEL_CALLS',
    'MAX_THINKING_TOKENS',
  ],
  codex: ['OPENAI_API_KEY', 'OPENAI_BASE_URL', 'OPENAI_ORG_ID', 'OPENAI_PROJECT_ID', 'CODEX_'],
  gemini: ['GEMINI_', 'GOOGLE_API_KEY', 'GOOGLE_GEMINI_BASE_URL', 'GOOGLE_GENAI_USE_VERTEXAI', 'GOOGLE_CLOUD_PROJECT', 'GOOGLE_CLOUD_LOCATION'],
  opencode: [
    'OPENCODE_',
    'ANTHROPIC_API_KEY',
    'OPENAI_API_KEY',
    'GEMINI_API_KEY',
    'GOOGLE_GENERATIVE_AI_API_KEY',
    'OPENROUTER_API_KEY',
    'GROQ_API_KEY',
    'MISTRAL_API_KEY',
    'DEEPSEEK_API_KEY',
    'XAI_API_KEY',
  ],
  aider: [
    'AIDER_',
    'ANTHROPIC_API_KEY',
    'OPENAI_API_KEY',
    'OPENAI_API_BASE',
    'GEMINI_API_KEY',
    'OPENROUTER_API_KEY',
    'GROQ_API_KEY',
    'MISTRAL_API_KEY',
    'DEEPSEEK_API_KEY',
    'XAI_API_KEY',
  ],
};

/** A variable name as the user may give it. */
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Why `name` cannot be passed to an agent (`--agent-env`, the workflow's `env:`), or null. svc's
 * own variables never are, whoever names them: the service's tokens, and the rest name svc's folders
 * (the agent gets the SVC_* variables of its leg).
 */
export function agentEnvNameProblem(name: string): string | null {
  if (!NAME.test(name)) return `'${name}' is not a variable name (letters, digits and _)`;
  if (/^SVC_/i.test(name)) return `${name} never reaches an agent: svc's own variables stay svc's (the agent gets its leg's SVC_CARD_KEY, SVC_RUN_ID, …)`;
  return null;
}

/** Where an agent's environment comes from: svc's, filtered by what its preset and the user allow. */
export interface AgentEnvSource {
  /** svc's own environment. */
  env: NodeJS.ProcessEnv;
  /** The preset (`--agent NAME`): its variables pass. `--agent-cmd` has none; the user names them. */
  agent?: { agent?: string };
  /** `--agent-env NAME` (repeatable). */
  agentEnv?: readonly string[];
  /** The workflow's `env:`. */
  workflow?: { env?: readonly string[] } | null;
}

const hasPassword = (url: string): boolean => {
  try {
    return new URL(url.includes('://') ? url : `http://${url}`).password !== '';
  } catch {
    return false;
  }
};

/** Whether svc's variable `name` may reach the agent, by the basics and the preset alone. */
function isAgentBasicVariable(name: string, value: string, preset?: string): boolean {
  if (/^SVC_/i.test(name)) return false;
  if (BASICS.has(name) || LOCALE.test(name)) return true;
  if (PROXIES.has(name)) return !hasPassword(value);
  const allowed = preset && Object.hasOwn(PRESET_ENV, preset) ? PRESET_ENV[preset as AgentName] : [];
  return allowed.some((p) => (p.endsWith('_') ? name.startsWith(p) : name === p));
}

/**
 * The complete environment for an agent or a workflow step: svc's variables the allowlist passes,
 * then the card's SVC_* variables. The result is passed as the whole child environment, never
 * merged with svc's again.
 */
export function agentEnv(source: AgentEnvSource, extra: AgentEnvExtra): Record<string, string> {
  const named = new Set([...(source.agentEnv ?? []), ...(source.workflow?.env ?? [])].filter((n) => agentEnvNameProblem(n) === null));
  const preset = source.agent?.agent;
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(source.env)) {
    if (value !== undefined && (named.has(name) || isAgentBasicVariable(name, value, preset))) env[name] = value;
  }
  return { ...env, ...extra };
}
