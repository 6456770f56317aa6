// The stored configuration: one JSON object in config.json, written 0600 (it holds the token) by
// writing a sibling file and renaming it over, so a crash never leaves half a file. SVC_CONFIG_DIR
// moves it (tests, CI containers); otherwise it is the platform's config folder for `svc`, the
// same file conf used to keep. conf itself was dropped: it imports ajv and semver for schemas and
// migrations this store never uses, ~45 ms of every command's start-up (README, Benchmarks).
import { AGENT_USER_SYNTAX, makeDirs } from '../../dispatch/index.js';
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
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
  agentUser: { describe: "who agents run as when svc is root: a user, a uid range FIRST-LAST, or none (svc's own)", parse: parseUserName },
  network: { describe: 'what a leg may reach: fenced, none or open', parse: parseNetwork },
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
  agentUser?: string;
  network?: string;
  pr?: boolean;
  githubApiUrl?: string;
  token?: string;
}

export interface ConfigStore {
  get<K extends keyof StoredConfig>(key: K): StoredConfig[K];
  set<K extends keyof StoredConfig>(key: K, value: NonNullable<StoredConfig[K]>): void;
  has(key: keyof StoredConfig): boolean;
  delete(key: keyof StoredConfig): void;
  /** Every stored setting (a copy). */
  readonly store: StoredConfig;
  readonly path: string;
}

/** Where conf (env-paths) kept svc's settings, so an existing login carries over. */
function defaultDir(env: Record<string, string | undefined>): string {
  // os.homedir() answers HOME when it is set; only without it is node:os loaded to look the user up.
  const home = env.HOME || process.getBuiltinModule('node:os').homedir();
  if (process.platform === 'darwin') return join(home, 'Library', 'Preferences', 'svc');
  if (process.platform === 'win32') return join(env.APPDATA || join(home, 'AppData', 'Roaming'), 'svc', 'Config');
  return join(env.XDG_CONFIG_HOME || join(home, '.config'), 'svc');
}

export function openConfig(env: Record<string, string | undefined>): ConfigStore {
  const dir = env.SVC_CONFIG_DIR || defaultDir(env);
  const path = join(dir, 'config.json');
  let data: StoredConfig | undefined;

  const read = (): StoredConfig => {
    if (data) return data;
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw new UsageError(`cannot read ${path}: ${(error as Error).message}`);
      return (data = {});
    }
    let parsed: unknown;
    try {
      parsed = text.trim() === '' ? {} : JSON.parse(text);
    } catch {
      parsed = null;
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw new UsageError(`${path} is not a JSON object: fix it, or remove it and log in again`);
    }
    return (data = parsed as StoredConfig);
  };

  const write = (next: StoredConfig): void => {
    makeDirs(dir, 0o700);
    const tmp = `${path}.${process.pid}.tmp`;
    try {
      writeFileSync(tmp, `${JSON.stringify(next, undefined, '\t')}\n`, { mode: 0o600 });
      renameSync(tmp, path);
    } catch (error) {
      rmSync(tmp, { force: true });
      throw error;
    }
    data = next;
  };

  return {
    path,
    get: (key) => read()[key],
    has: (key) => read()[key] !== undefined,
    set: (key, value) => write({ ...read(), [key]: value }),
    delete: (key) => {
      const { [key]: _gone, ...rest } = read();
      write(rest);
    },
    get store() {
      return { ...read() };
    },
  };
}

export function isConfigKey(key: string): key is ConfigKey {
  return Object.hasOwn(CONFIG_KEYS, key);
}

/**
 * A setting named on the command line (`config get|set|unset KEY`): one of the stored settings.
 * Kept here, not in a module of its own: a module that small still cost its own chunk at start-up.
 */
export function checkKey(key: string): ConfigKey {
  if (!isConfigKey(key)) {
    throw new UsageError(`unknown setting '${key}'; settings: ${Object.keys(CONFIG_KEYS).join(', ')}`);
  }
  return key;
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

function parseNetwork(v: string): string {
  if (['open', 'fenced', 'none'].includes(v)) return v;
  throw new UsageError(`expected open, fenced or none, got '${v}'`);
}

function parseUserName(v: string): string {
  // Whether the user exists is asked when a run starts.
  if (AGENT_USER_SYNTAX.test(v)) return v;
  throw new UsageError(`expected a user name, UID[:GID], a uid range FIRST-LAST or none, got '${v}'`);
}
