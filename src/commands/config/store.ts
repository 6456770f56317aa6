// The stored configuration, through conf. The file holds the token, so it is written 0600.
// SVC_CONFIG_DIR moves it (tests, CI containers); otherwise conf picks the platform's config folder.
import Conf from 'conf';
import { UsageError } from '../exit-codes.js';

/** Keys a user may `svc config set`, with how a string from the command line becomes a value. */
export const CONFIG_KEYS = {
  baseUrl: { describe: 'service base address', parse: (v: string) => v },
  project: { describe: 'default project key', parse: (v: string) => v },
  agent: { describe: 'default agent preset', parse: (v: string) => v },
  model: { describe: 'default model for the agent', parse: (v: string) => v },
  parallel: { describe: 'legs run at once', parse: parsePositiveInt },
  sendLogs: { describe: 'send agent output as event bodies', parse: parseBool },
  maxWait: { describe: 'longest wait for a rate limit or an unavailable service', parse: (v: string) => v },
  pr: { describe: 'open or update a pull request after each pushed leg', parse: parseBool },
  githubApiUrl: { describe: "GitHub's REST API base for pull requests", parse: (v: string) => v },
} as const;

export type ConfigKey = keyof typeof CONFIG_KEYS;

export interface StoredConfig {
  baseUrl?: string;
  project?: string;
  agent?: string;
  model?: string;
  parallel?: number;
  sendLogs?: boolean;
  maxWait?: string;
  pr?: boolean;
  githubApiUrl?: string;
  token?: string;
}

export type ConfigStore = Conf<StoredConfig>;

export function openConfig(env: Record<string, string | undefined>): ConfigStore {
  return new Conf<StoredConfig>({
    projectName: 'svc',
    projectSuffix: '',
    configFileMode: 0o600,
    ...(env.SVC_CONFIG_DIR ? { cwd: env.SVC_CONFIG_DIR } : {}),
  });
}

export function isConfigKey(key: string): key is ConfigKey {
  return Object.hasOwn(CONFIG_KEYS, key);
}

function parsePositiveInt(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`expected a whole number of at least 1, got '${v}'`);
  return n;
}

function parseBool(v: string): boolean {
  if (['true', 'yes', 'on', '1'].includes(v)) return true;
  if (['false', 'no', 'off', '0'].includes(v)) return false;
  throw new UsageError(`expected true or false, got '${v}'`);
}
