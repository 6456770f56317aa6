// The run lifecycle's interface: the options a command turns its flags into (options.ts), the
// functions and sinks it is given, and the summary it answers (the CLI prints it; `--json`
// serialises it).
import type { DispatchCommand } from '../../contract/types.js';
import type {
  BuildPrompt,
  CheckoutInPlace,
  Clock,
  ChangedPaths,
  CommitsSince,
  DispatchService,
  LegSummary,
  PrepareWorktree,
  ProgressSink,
  RunAgentProcess,
} from '../ports.js';
import type { LegMode } from '../select/types.js';
import type { PullRequestWriter } from '../pr/types.js';
export type { DispatchOptions, DispatchTimeouts } from '../options.js';

/** What `onBranchPushed` hears. */
export interface BranchPushed {
  runId: string;
  key: string;
  branch: string;
  repo: string;
  mode: LegMode;
}

export interface DispatchDeps {
  /** Must NOT be aborted by `signal`: after an interruption the engine still flushes and closes. */
  service: DispatchService;
  runAgentProcess: RunAgentProcess;
  prepareWorktree: PrepareWorktree;
  /** Needed only with `worktree: false`. */
  checkoutInPlace?: CheckoutInPlace;
  /**
   * The repository a card works in (a hosted run: the clone of the card's target repository);
   * null when the card has none (its leg fails). Absent: every card works in `opts.repo`.
   */
  repoFor?(key: string): string | null;
  /** Pushes `branch` of `repo` to the same name on its remote (`opts.push`); rejects on failure. */
  pushBranch?(repo: string, branch: string): Promise<void>;
  /**
   * Called once a leg's branch was pushed (never for a review): the seam pull requests hang off.
   * A rejection is reported as a warning; the leg stays implemented.
   */
  onBranchPushed?(pushed: BranchPushed): Promise<void>;
  /** Writes pull requests (`opts.pr`): GitHub's REST API on hosted runs, the user's gh locally. */
  pullRequests?: PullRequestWriter;
  commitsSince: CommitsSince;
  /** What the leg changed of its protected paths (git/worktree.ts changedPathsOf). */
  changedPaths: ChangedPaths;
  buildPrompt: BuildPrompt;
  clock: Clock;
  stateDir: string;
  output: ProgressSink;
  /** Aborted on the first SIGINT/SIGTERM; its reason names the signal (see signals.ts). */
  signal: AbortSignal;
}

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
  /** DISPATCH §2: 0 success, 1 failed, 130/143 interrupted, others from service errors. */
  exitCode: number;
  /** One line: what was picked, or why nothing ran. */
  note: string;
  dryRun: boolean;
  /** The close-out leg of run_scope, when it ran. */
  closeOut?: { outcome: 'succeeded' | 'failed'; exitCode: number | null; reason: string | null } | null;
  /** auto: each run it opened, in order (the top level repeats the last one's stop). */
  runs?: RunSummary[];
}
