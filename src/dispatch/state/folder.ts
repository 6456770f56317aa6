// The local state folder: one directory per dispatch run, holding its journal (every event before it
// is sent, and the acknowledgements), run.json (what a resume or a recovery needs — never a token)
// and the full, redacted agent output per leg. It is the ground truth after a crash.
import { readdirSync, readFileSync, renameSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { SvcError } from '../../api/errors.js';
import type { DispatchCommand, DispatchRun, DispatchRunOpen } from '../../contract/types.js';
import { readRecordedOptions, type RecordedOptions } from '../options.js';
import { makeDirs } from './make-dirs.js';

/**
 * `SVC_STATE_DIR`, else `$XDG_STATE_HOME/svc`, else `~/.local/state/svc`. node:os is taken only
 * for the last: every command loads this module, most never ask.
 */
export function resolveStateDir(env: Record<string, string | undefined>, home: string = process.getBuiltinModule('node:os').homedir()): string {
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
  /**
   * The options a `continue` reuses (agent, timeouts, flags), as options.ts writes them; read back,
   * an option of another shape is left out (readRecordedOptions).
   */
  options: Partial<RecordedOptions>;
}

export interface RunPaths {
  dir: string;
  journal: string;
  runJson: string;
  logs: string;
  prompts: string;
}

/** A run id that would leave the state folder (`../..`): bad input, exit 2. */
export class UnsafeRunIdError extends SvcError {
  readonly kind = 'usage';
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
  makeDirs(paths.logs, 0o700);
  makeDirs(paths.prompts, 0o700);
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
    const record = JSON.parse(readFileSync(paths.runJson, 'utf8')) as RunRecord | null;
    return record && typeof record === 'object' ? { ...record, options: readRecordedOptions(record.options) } : record;
  } catch {
    return null;
  }
}

/** What a question over every local run needs of each: which run, of which project, opened when. */
export type RunHead = Pick<RunRecord, 'runId' | 'projectKey' | 'openedAt'>;

// A run's head never changes once its run.json is written: read once per process and folder.
const headsRead = new Map<string, RunHead>();

/**
 * Every run's head, oldest first: run.json read without its options checked (readRecordedOptions),
 * which a question over hundreds of past runs has no use for.
 */
export function listRunHeads(stateDir: string): RunHead[] {
  const root = join(stateDir, 'runs');
  if (!existsSync(root)) return [];
  const heads: RunHead[] = [];
  for (const name of readdirSync(root)) {
    const seen = headsRead.get(join(root, name));
    if (seen) {
      heads.push(seen);
      continue;
    }
    try {
      const r = JSON.parse(readFileSync(runPaths(stateDir, name).runJson, 'utf8')) as Partial<RunRecord> | null;
      // runPaths refuses a run id that would leave the folder (the journal is found by it).
      if (r && typeof r.runId === 'string' && typeof r.projectKey === 'string' && typeof r.openedAt === 'string' && runPaths(stateDir, r.runId)) {
        const head = { runId: r.runId, projectKey: r.projectKey, openedAt: r.openedAt };
        headsRead.set(join(root, name), head);
        heads.push(head);
      }
    } catch {
      // No run.json, one cut short, or a stray folder with an unsafe name: not a run of ours.
    }
  }
  return heads.sort((a, b) => a.openedAt.localeCompare(b.openedAt));
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

/** The local state could not be written: a one-line error, exit 1. */
export class LocalStateError extends SvcError {
  readonly kind = 'failed';
  constructor(message: string, cause?: unknown) {
    super(message, { cause });
    this.name = 'LocalStateError';
  }
}

/**
 * A write to the state folder that failed for want of space, named for what it is (the raw
 * ENOSPC says neither which folder nor that it is ours); null for any other error.
 */
export function stateFolderFault(error: unknown, stateDir: string): LocalStateError | null {
  if (error instanceof LocalStateError) return error;
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'ENOSPC' || code === 'EDQUOT') return new LocalStateError(`no space left on the state folder ${stateDir}`, error);
  return null;
}

/** `ENOTDIR: not a directory, mkdir '…'` → `ENOTDIR (not a directory)`: short, one line. */
export function describeFsError(error: unknown): string {
  const e = error as { code?: unknown; message?: unknown } | null;
  const text = typeof e?.message === 'string' ? e.message.split('\n')[0]! : String(error);
  return typeof e?.code === 'string' ? text.replace(/,\s.*$/, '') : text;
}

/**
 * A run about to be opened. Written BEFORE the open (openDispatchRun) and removed once run.json holds the
 * run's id, so a run whose open landed while its record did not (a kill -9 between the open's
 * answer and run.json, a disk that filled up) can still be found: `svc runs recover` repeats the
 * open with the same idempotency key and learns the run's id. Never holds a token.
 */
export interface PendingOpen {
  idempotencyKey: string;
  /** The open exactly as sent (the idempotency key included); recover repeats it. */
  open: DispatchRunOpen;
  /** run.json without what only the open's answer tells (the id, the seq, the run). */
  record: Omit<RunRecord, 'runId' | 'baseSeq' | 'run'>;
  /** The process making the open: while it lives, recover leaves the record alone. */
  owner?: { pid: number; start: string | null };
}

/** `<state>/opening/<sha256 of the key>.json`: a user's `--idempotency-key` never names a path. */
export function pendingOpenPath(stateDir: string, idempotencyKey: string): string {
  // Taken here, not imported: every command loads this module (resolveStateDir), and node:crypto
  // loads Node's streams with it.
  const { createHash } = process.getBuiltinModule('node:crypto');
  const name = createHash('sha256').update(idempotencyKey).digest('hex').slice(0, 40);
  return join(stateDir, 'opening', `${name}.json`);
}

/** Writes the pending record atomically (mode 0600 in a 0700 folder); throws LocalStateError. */
export function writePendingOpen(stateDir: string, pending: PendingOpen): string {
  const path = pendingOpenPath(stateDir, pending.idempotencyKey);
  try {
    makeDirs(join(stateDir, 'opening'), 0o700);
    const tmp = `${path}.tmp`;
    writeFileSync(tmp, JSON.stringify(pending, null, 2) + '\n', { mode: 0o600 });
    renameSync(tmp, path);
    return path;
  } catch (error) {
    throw new LocalStateError(`cannot write the local state of the run under ${stateDir}: ${describeFsError(error)}; no run was opened`, error);
  }
}

/** Removes a pending record (best effort: a leftover one only makes recover ask the service). */
export function removePendingOpen(path: string): void {
  try {
    rmSync(path, { force: true });
  } catch {
    // Recover finds it, re-opens with its key and learns the run is recorded or closed.
  }
}

/** Every pending open left in the state folder, with its file. */
export function listPendingOpens(stateDir: string): { path: string; pending: PendingOpen }[] {
  const root = join(stateDir, 'opening');
  if (!existsSync(root)) return [];
  const out: { path: string; pending: PendingOpen }[] = [];
  for (const name of readdirSync(root).sort()) {
    if (!name.endsWith('.json')) continue;
    const path = join(root, name);
    try {
      const pending = JSON.parse(readFileSync(path, 'utf8')) as PendingOpen;
      if (typeof pending?.idempotencyKey === 'string' && pending.open && pending.record) out.push({ path, pending });
    } catch {
      // Not a record we wrote (they are written whole, by rename): leave it alone.
    }
  }
  return out;
}
