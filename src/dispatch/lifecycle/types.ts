// The run lifecycle's interface: the options a command turns its flags into, the functions and
// sinks it is given, and the summary it answers (the CLI prints it; `--json` serialises it).
import type { GitIdentity } from '../git/identity.js';
import type { RunBase } from '../git/worktree.js';
import type { DispatchCommand } from '../../contract/types.js';
import type { AgentChoice } from '../agent/presets.js';
import type { AgentPoolSpec } from '../agent/user.js';
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
import type { LaneFilters, LegMode } from '../select/types.js';
import type { PullRequestWriter } from '../pr/types.js';
import type { Workflow } from '../workflow/policy.js';
import type { NetworkPolicy } from '../fence/index.js';

export interface DispatchTimeouts {
  /** No agent output for this long ends the leg (default 15 min). */
  idleMs: number;
  /** One leg may run this long (default 60 min). */
  cardMs: number;
  /** Between SIGTERM and SIGKILL to an agent (default 10 s). */
  killGraceMs: number;
  /** The whole run (`--timeout`): when it runs out the run closes with status `timed_out`. */
  runMs: number | null;
  /** How long the close (and an interruption) may wait for pending events (default 10 s for
   * signals; a normal close waits up to the stream's own give-up time). */
  flushMs?: number;
}

export interface DispatchOptions {
  command: DispatchCommand;
  /** run/fix/review: the keys; run_scope: [KEY]; continue: [RUN_ID]; others: []. */
  keys: string[];
  projectKey: string;
  /** Recorded in run.json (for `continue` and `svc runs recover`); never a token. */
  baseUrl: string;
  /** The git repository the agents work on. */
  repo: string;
  /** Worktrees folder (default: the worktree module's, beside the repository's git dir). */
  worktreeRoot?: string;
  /** Where new branches start (default HEAD); a run opened here starts them from `base.sha`. */
  baseRef?: string;
  /** The commit and branch the run chose when it opened; a run in place goes back to it when it ends. */
  base?: RunBase;
  /** Who the agents' commits are by, where git would otherwise have no one (git/identity.ts). */
  gitIdentity?: GitIdentity | null;
  /** `--agent NAME` or `--agent-cmd "…"`, with `--model`. */
  agent: AgentChoice;
  /** `--agent` repeated: attempt n of a best-of-N leg runs the n-th (cycling); absent: `agent`. */
  agents?: AgentChoice[];
  /** `--attempts N` (1–8), over the workflow's `attempts:`: the check picks one of N (lifecycle/attempts.ts). */
  attempts?: number;
  /** `--push-attempts`: the losing attempts' branches are pushed too (with `push`). */
  pushAttempts?: boolean;
  /** `--all-attempts`: the others run to their end after an attempt won. */
  allAttempts?: boolean;
  /** batch/auto `--max`. */
  maxCards?: number | null;
  /** auto `--per-run`: the most cards in each of its runs (a fleet worker comes back for more). */
  perRun?: number;
  onFailure: 'halt' | 'continue';
  /** Legs at once (default 1). */
  parallel: number;
  /** Reused on every retry of the open; default a fresh UUID per run. */
  idempotencyKey?: string;
  sendLogs: boolean;
  allowEmpty: boolean;
  timeouts: DispatchTimeouts;
  maxCostUsd?: number | null;
  heartbeatIntervalMs: number;
  /**
   * Re-reading running legs' items (reconcile.ts): false is `--no-reconcile`; `floorMs` is how seldom
   * a card may be read at most (default 30 s; engine tests shorten it as they shorten the heartbeat).
   */
  reconcile?: false | { floorMs?: number };
  /** `--max-wait`: the run gives up on an unreachable service after this long, heartbeats included. */
  giveUpAfterMs?: number;
  /** false: `--no-worktree`, the branch is checked out in the repository itself. */
  worktree: boolean;
  dryRun: boolean;
  lanes?: LaneFilters;
  /** auto: also pick cards that failed in recent local runs. */
  retryFailed?: boolean;
  /** next/batch/auto: also pick cards implemented by an earlier local run (see select/prior-work.ts). */
  rerun?: boolean;
  /** How far back "recent" reaches for auto (default 24 h). */
  recentFailureWindowMs?: number;
  doneStatuses?: readonly string[];
  /** Secrets in play (SVC_TOKEN, SVC_RUN_TOKEN, git tokens): redacted from every log line. */
  secrets: readonly string[];
  /**
   * Secrets that appear while the run goes on (a hosted run's git tokens, minted again before they
   * expire): asked again for every piece of agent output and every failure reason.
   */
  liveSecrets?: () => readonly string[];
  /** Heartbeats from open to close (default true). A hosted run sends none: op 31 is for local runs. */
  heartbeat?: boolean;
  /** Push an implemented leg's branch through `deps.pushBranch` (hosted runs: on by default). */
  push?: boolean;
  /** `--pr`: after a pushed leg, open or update its pull request; review posts, fix comments (hosted: on by default). */
  pr?: boolean;
  /** `--draft`: pull requests are opened as drafts. */
  draft?: boolean;
  /** svc's environment: agents and workflow steps get what agentEnv's allowlist passes of it. */
  env: NodeJS.ProcessEnv;
  /** `--agent-env NAME`: variables of `env` passed to agents besides the allowlist (never an SVC_* one). */
  agentEnv?: readonly string[];
  /** Run each agent as a uid of this pool, leased for its leg, in a clone of its own (svc is root; docs/trust.md). */
  agentUser?: AgentPoolSpec | null;
  /** Without an agent user: one line said when the first agent starts (svc is root, or hosted). */
  agentUserWarning?: string | null;
  /** Event flush interval (default 1 s). */
  flushIntervalMs?: number;
  /** The repository's workflow (.svc/workflow.yml of the base commit, flags applied); absent: none. */
  workflow?: Workflow | null;
  /** A hosted run's: each clone's workflow by its folder (what `repoFor` answers), over `workflow`. */
  workflows?: Record<string, Workflow | null>;
  /** `--verify CMD` / `--no-verify` (false) and `--setup CMD` as given: recorded so `continue` applies them again. */
  workflowFlags?: { verify?: string | false; setup?: string };
  /** What a leg's processes may reach (DISPATCH.md §9); absent or `open`: anything. */
  network?: NetworkPolicy | null;
  /** The one line that says it, when the first agent starts (run-options' networkFor). */
  networkLine?: string | null;
}

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
