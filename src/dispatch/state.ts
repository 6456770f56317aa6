// The local state folder: one directory per dispatch run, holding its journal (every event before it
// is sent, and the acknowledgements), run.json (what a resume or a recovery needs — never a token)
// and the full, redacted agent output per leg. It is the ground truth after a crash.
import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync, existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { DispatchCommand, DispatchRun } from '../contract/types.js';

/** `SVC_STATE_DIR`, else `$XDG_STATE_HOME/svc`, else `~/.local/state/svc`. */
export function resolveStateDir(env: Record<string, string | undefined>, home: string = homedir()): string {
  if (env.SVC_STATE_DIR) return env.SVC_STATE_DIR;
  if (env.XDG_STATE_HOME) return join(env.XDG_STATE_HOME, 'svc');
  return join(home, '.local', 'state', 'svc');
}

/** What run.json records: enough to resume (`continue`) or recover the run, and nothing secret. */
export interface RunRecord {
  runId: string;
  baseUrl: string;
  projectKey: string;
  command: DispatchCommand;
  /** The command the cards were selected by (for `continue`, the original one). */
  originalCommand: DispatchCommand;
  scopeKey: string | null;
  /** The run's seq when it was opened: local event n maps to server seq baseSeq + n. */
  baseSeq: number;
  openedAt: string;
  cards: { workItemKey: string; skipReason?: string }[];
  /** The run as the open answered it. */
  run?: DispatchRun;
  /** Options a `continue` reuses (agent, timeouts, flags); plain data only. */
  options: Record<string, unknown>;
}

export interface RunPaths {
  dir: string;
  journal: string;
  runJson: string;
  logs: string;
  prompts: string;
}

/** A run id that would leave the state folder (`../..`): bad input, exit 2. */
export class UnsafeRunIdError extends Error {
  readonly exitCode = 2;
  constructor(runId: string) {
    super(`'${runId}' is not a run id`);
  }
}

export function runPaths(stateDir: string, runId: string): RunPaths {
  // Run ids come from the service; keep them from escaping the folder.
  if (!/^[A-Za-z0-9._-]+$/.test(runId) || runId.startsWith('.')) throw new UnsafeRunIdError(runId);
  const dir = join(stateDir, 'runs', runId);
  return {
    dir,
    journal: join(dir, 'journal.jsonl'),
    runJson: join(dir, 'run.json'),
    logs: join(dir, 'logs'),
    prompts: join(dir, 'prompts'),
  };
}

export function logPath(paths: RunPaths, key: string): string {
  return join(paths.logs, `${key}.log`);
}

/** Creates the run folder (mode 0700: logs may hold project code) and writes run.json atomically. */
export function createRunFolder(stateDir: string, record: RunRecord): RunPaths {
  const paths = runPaths(stateDir, record.runId);
  mkdirSync(paths.logs, { recursive: true, mode: 0o700 });
  mkdirSync(paths.prompts, { recursive: true, mode: 0o700 });
  writeRunRecord(paths, record);
  return paths;
}

export function writeRunRecord(paths: RunPaths, record: RunRecord): void {
  const tmp = `${paths.runJson}.tmp`;
  writeFileSync(tmp, JSON.stringify(record, null, 2) + '\n', { mode: 0o600 });
  renameSync(tmp, paths.runJson);
}

export function readRunRecord(stateDir: string, runId: string): RunRecord | null {
  const paths = runPaths(stateDir, runId);
  if (!existsSync(paths.runJson)) return null;
  try {
    return JSON.parse(readFileSync(paths.runJson, 'utf8')) as RunRecord;
  } catch {
    return null;
  }
}

/** Every run id with a folder, oldest first by the openedAt recorded in run.json. */
export function listRunRecords(stateDir: string): RunRecord[] {
  const root = join(stateDir, 'runs');
  if (!existsSync(root)) return [];
  const records: RunRecord[] = [];
  for (const name of readdirSync(root)) {
    try {
      const record = readRunRecord(stateDir, name);
      if (record) records.push(record);
    } catch {
      // A stray folder with an unsafe name is not ours.
    }
  }
  return records.sort((a, b) => a.openedAt.localeCompare(b.openedAt));
}
