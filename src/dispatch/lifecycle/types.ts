// The run lifecycle's interface: the options a command turns its flags into (options.ts), the
// functions and sinks it is given, and the summary it answers (the CLI prints it; `--json`
// serialises it).
import type { DispatchCommand } from '../../contract/types.js';
import type { LegSummary } from '../ports.js';
export type { DispatchOptions, DispatchTimeouts } from '../options.js';

export type { BranchPushed, DispatchDeps } from '../ports.js';

/** A card as opened, with its skip reason (dry runs print exactly this). */
export interface CardSummary {
  key: string;
  title: string;
  skipReason: string | null;
  gatedBy: string | null;
}

export interface RunSummary {
  /** Null when no run was opened (dry run, nothing ready). */
  runId: string | null;
  command: DispatchCommand;
  /** The scope the run was opened with (run_scope KEY, next's container or bug), else null. */
  scopeKey: string | null;
  stopReason: string | null;
  status: string | null;
  cards: CardSummary[];
  legs: LegSummary[];
  /** README.md#exit-codes: 0 success, 1 failed, 130/143 interrupted, others from service errors. */
  exitCode: number;
  /** One line: what was picked, or why nothing ran. */
  note: string;
  dryRun: boolean;
  /** The close-out leg of run_scope, when it ran. */
  closeOut?: { outcome: 'succeeded' | 'failed'; exitCode: number | null; reason: string | null } | null;
  /** auto: each run it opened, in order (the top level repeats the last one's stop). */
  runs?: RunSummary[];
}
