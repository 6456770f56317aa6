// What a leg leaves behind for reports: the journal holds only what the service is sent (no
// reason, spend or base commit), so each finished leg appends one line to `<run>/legs.jsonl`. A
// report built later, or on another day, reads it instead of asking anyone.
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readHead } from '../git/refs.js';
import { runSync } from '../process/run.js';
import type { LegSummary } from '../ports.js';
import type { RunPaths } from '../state/folder.js';

/** One line of legs.jsonl. Never holds a token: the reason was redacted by the leg. */
export interface LegRecord extends LegSummary {
  startedAt: string;
  endedAt: string;
  /** The repository the leg worked in, the commit its branch started from and where it ended. */
  repo: string | null;
  base: string | null;
  head: string | null;
  /** true for run_scope's close-out leg. */
  closeOut?: boolean;
}

export function legsFile(paths: Pick<RunPaths, 'dir'>): string {
  return join(paths.dir, 'legs.jsonl');
}

/** The commit checked out in `dir`, or null (no worktree, git failed). */
export function headOf(dir: string | null | undefined): string | null {
  if (!dir) return null;
  // From git's files where they say it plainly: no process, and no blocked event loop, per leg.
  const head = readHead(dir);
  if (head) return head;
  const r = runSync('git', ['rev-parse', 'HEAD'], { cwd: dir, timeoutMs: 0 });
  return r.code === 0 ? r.stdout.trim() || null : null;
}

/** Appends a leg's record. Best effort: a full disk must not turn a landed leg into a failed one. */
export function recordLeg(paths: Pick<RunPaths, 'dir'>, record: LegRecord): void {
  try {
    appendFileSync(legsFile(paths), JSON.stringify(record) + '\n', { mode: 0o600 });
  } catch {
    // The report then falls back to what the journal knows (disposition, exit code, times).
  }
}

/** Every record of the run, in the order the legs finished; a torn last line is ignored. */
export function readLegRecords(paths: Pick<RunPaths, 'dir'>): LegRecord[] {
  const file = legsFile(paths);
  if (!existsSync(file)) return [];
  const out: LegRecord[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line) continue;
    try {
      const r = JSON.parse(line) as LegRecord;
      if (r && typeof r.key === 'string') out.push(r);
    } catch {
      // torn by a crash mid-write
    }
  }
  return out;
}
