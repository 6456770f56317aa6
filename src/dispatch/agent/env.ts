// The agent's environment (DISPATCH.md §3): what the user's shell has, minus the credentials the
// agent must never hold, plus the SVC_* variables that describe its card. The agent is an
// arbitrary program under the control of a model: a token in its environment is a token in its
// transcript, so the service tokens and every git-hosting token are dropped by name.
import type { AgentEnvExtra } from './types.js';

/** Dropped by exact name: the service's own credentials and the usual git-hosting tokens. */
const DENIED_NAMES = new Set([
  'SVC_TOKEN',
  'SVC_RUN_TOKEN',
  'GITHUB_TOKEN',
  'GH_TOKEN',
  'GH_ENTERPRISE_TOKEN',
  'GITHUB_ENTERPRISE_TOKEN',
  'GITLAB_TOKEN',
  'GL_TOKEN',
  'CI_JOB_TOKEN',
  'BITBUCKET_TOKEN',
  'GIT_TOKEN',
  'GIT_PASSWORD',
  'GIT_ASKPASS',
  'SSH_ASKPASS',
  'ACTIONS_RUNTIME_TOKEN',
  'ACTIONS_ID_TOKEN_REQUEST_TOKEN',
]);

/**
 * Dropped by shape: any other `SVC_*` variable the client was given (the agent gets exactly the
 * five below), and `GIT_CONFIG_*` entries, which can carry an `http.extraHeader` with a token.
 */
const DENIED_PATTERNS = [/^SVC_/, /^GIT_CONFIG_(COUNT|KEY_\d+|VALUE_\d+|PARAMETERS)$/, /^(GITHUB|GITLAB|GIT)_.*(TOKEN|PASSWORD|SECRET)$/];

/** Whether a variable of the client's environment may be passed on to an agent. */
export function isAgentSafeVariable(name: string): boolean {
  const upper = name.toUpperCase();
  return !DENIED_NAMES.has(upper) && !DENIED_PATTERNS.some((re) => re.test(upper));
}

/**
 * The complete environment for an agent: `base` (usually process.env) filtered, then the card's
 * SVC_* variables. The result is passed as the whole child environment, never merged again.
 */
export function agentEnv(base: NodeJS.ProcessEnv, extra: AgentEnvExtra): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(base)) {
    if (value !== undefined && isAgentSafeVariable(name)) env[name] = value;
  }
  return { ...env, ...extra };
}
