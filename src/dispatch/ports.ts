// The narrow seams the dispatch engine is written against. The engine never sees the HTTP client,
// the terminal or the process: the CLI adapts the real API client to `DispatchService` in one small
// file, and tests hand in a client bound to the local service. Everything returns contract types.
import type { LegNetwork } from './fence/index.js';
import { SvcError } from '../api/errors.js';
import type { WaitBudget } from '../api/retry.js';
import type {
  CloseOutPrompt,
  DispatchEventsAppend,
  DispatchEventsAppended,
  DispatchRun,
  DispatchRunClose,
  DispatchRunOpen,
  DispatchRunOpened,
  Page,
  ReadyBugGroup,
  ReadyContainer,
  ReadyLaneFilters,
  WorkItemDetail,
  WorkItemSummary,
} from '../contract/types.js';
import type { LegCheck, LegResult, LegSpec } from './agent/types.js';
export type { LegCheck } from './agent/types.js';
import type { PullRequestRef, PullRequestWriter } from './pr/types.js';

/** Paging of a list call; omitted fields take the contract's defaults. */
export interface PageQuery {
  cursor?: string;
  limit?: number;
}

/**
 * The wait budget of the engine loop making a call (a batch's delivery, a heartbeat outage, a
 * close): the client's own retries of the call draw on it, so the two loops share one --max-wait.
 */
export interface WaitWithin {
  budget?: WaitBudget;
}

/** The operations the engine calls, named as in src/contract/operations.ts. */
export interface DispatchService {
  /** openDispatchRun. Retried by the client with the same idempotencyKey. */
  openDispatchRun(body: DispatchRunOpen): Promise<DispatchRunOpened>;
  /** getDispatchRun. */
  getDispatchRun(runId: string, o?: WaitWithin): Promise<DispatchRun>;
  /** closeDispatchRun. */
  closeDispatchRun(runId: string, body: DispatchRunClose, o?: WaitWithin): Promise<DispatchRun>;
  /** getCloseOutPrompt. */
  getCloseOutPrompt(runId: string): Promise<CloseOutPrompt>;
  /** appendDispatchEvents. Must NOT be blindly retried by the client after an ambiguous failure: the engine reads seq. */
  appendDispatchEvents(runId: string, body: DispatchEventsAppend, o?: WaitWithin): Promise<DispatchEventsAppended>;
  /** appendDispatchEvents with its body already encoded (`{"events":[…]}` as UTF-8 JSON); the same rule applies. */
  appendEncodedEvents?(runId: string, json: Uint8Array, o?: WaitWithin): Promise<DispatchEventsAppended>;
  /** heartbeatDispatchRun. */
  heartbeatDispatchRun(runId: string, o?: WaitWithin): Promise<void>;
  /** getWorkItem. */
  getWorkItem(key: string): Promise<WorkItemDetail>;
  /** getWorkItem within a wait budget (a reconcile read, which must hold nothing up). */
  readWorkItem?(key: string, o?: WaitWithin): Promise<{ item: WorkItemDetail; etag: string | null }>;
  /** listWorkItems. */
  listWorkItems(projectKey: string, query: PageQuery & { filter?: string }): Promise<Page<WorkItemSummary>>;
  /** listReadyBugs. */
  listReadyBugs(projectKey: string, query: PageQuery & ReadyLaneFilters): Promise<Page<ReadyBugGroup>>;
  /** listReadyContainers. */
  listReadyContainers(projectKey: string, query: PageQuery & Pick<ReadyLaneFilters, 'priority' | 'assigneeId' | 'sprintId'>): Promise<Page<ReadyContainer>>;
}

/**
 * What the engine reads from a thrown error. The API client's `ApiError` has this shape; anything
 * without a numeric `status` is a network fault (status 0).
 */
export interface ServiceErrorShape {
  status: number;
  code?: string;
  /** True when the request may or may not have taken effect (timeout, reset after sending). */
  ambiguous?: boolean;
  message?: string;
}

export function serviceErrorOf(error: unknown): ServiceErrorShape {
  if (typeof error === 'object' && error !== null) {
    const e = error as Record<string, unknown>;
    const status = typeof e.status === 'number' ? e.status : 0;
    return {
      status,
      ...(typeof e.code === 'string' ? { code: e.code } : {}),
      // The client says whether the request may have taken effect; a foreign fault with no HTTP
      // status may have happened after the request left, so it is treated as ambiguous.
      ambiguous: typeof e.ambiguous === 'boolean' ? e.ambiguous : status === 0,
      ...(typeof e.message === 'string' ? { message: e.message } : {}),
    };
  }
  return { status: 0, ambiguous: true, message: String(error) };
}

/** 409 on append, heartbeat or close: the run is closed (by the reaper or another client). */
export function isRunClosed(error: unknown): boolean {
  return serviceErrorOf(error).status === 409;
}

/** Worth retrying later (docs/dispatch.md#the-wire: 429, 5xx, network faults); 4xx never. */
export function isRetryable(error: unknown): boolean {
  const { status } = serviceErrorOf(error);
  return status === 0 || status === 429 || status >= 500;
}

/** The run was closed under us: every loop stops, nothing more is sent but reads; exit 1. */
export class RunClosedError extends SvcError {
  readonly kind = 'failed';
  constructor(
    readonly runId: string,
    cause?: unknown,
  ) {
    super(`run ${runId} was closed by the service (another client or the reaper)`, { cause });
    this.name = 'RunClosedError';
  }
}

/** A narrow progress sink; the CLI renders it (stderr, spinners, JSON mode silence). */
export interface ProgressSink {
  legStarted(leg: { key: string; title: string; index: number; total: number; branch: string }): void;
  legFinished(leg: LegSummary): void;
  info(message: string): void;
  warn(message: string): void;
}

/** Time, injectable so tests can observe and shorten it. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** How one leg ended, as the summary and the progress sink report it. */
export interface LegSummary {
  key: string;
  title: string;
  disposition: string;
  durationMs: number;
  exitCode: number | null;
  reason: string | null;
  costUsd: number | null;
  tokens: { in: number | null; out: number | null };
  sessionBranch: string | null;
  /** A review leg's result: the agent's final message (redacted), or null when it said nothing. */
  review?: string | null;
  /** What `--pr` did for the leg (opened, updated, reviewed, commented, or a hint); absent without it. */
  pullRequest?: PullRequestRef | null;
  /** With a workflow: the leg's check (passed, failed, none) and how many times the agent ran. */
  check?: LegCheck;
  attempts?: number;
  /** A fenced leg (docs/trust.md): its network mode and what the fence refused. */
  network?: LegNetwork;
  /** Best-of-N (`--attempts`, lifecycle/attempts.ts): every attempt, and which one the check picked. */
  bestOf?: BestOf;
}

/** One attempt of a best-of-N leg, as the summary and the report list it. */
export interface AttemptSummary {
  attempt: number;
  /** The preset it ran, or `command` for an --agent-cmd. */
  agent: string;
  branch: string | null;
  /** `stopped`: another attempt won first (or it never started: its reason says which). */
  disposition: 'implemented' | 'failed' | 'stopped';
  reason: string | null;
  check: LegCheck['status'];
  durationMs: number;
  costUsd: number | null;
  /** Lines added and removed since the base: the tie-break between attempts ending at once. */
  diffLines: number | null;
}

export interface BestOf {
  /** The attempt whose commit is on svc/<KEY>, or null when none passed. */
  winner: number | null;
  /** One line: why it won, or why none did. */
  why: string;
  attempts: AttemptSummary[];
}

// --- The engine's own functions, injected so tests (and hosted runs) can swap them. The types
// they take and give are declared here, where the engine meets them; the implementations conform.

/** `RunAgentProcess`'s own types (src/dispatch/agent): the engine builds a LegSpec per card. */
export type { LegResult, LegSpec } from './agent/types.js';

/**
 * Runs the agent's program once, to its end: its process group, its prompt, its output, its
 * timeouts and its stream's verdict (src/dispatch/agent/run-process.ts `runAgentProcess`).
 */
export type RunAgentProcess = (spec: LegSpec) => Promise<LegResult>;

/** A card's checkout, ready for its agent. */
export interface PreparedWorktree {
  /** Where the agent runs. */
  path: string;
  branch: string;
  /** False when an existing worktree was reused. */
  created: boolean;
  /** HEAD before the agent ran: `commitsSince(path, headBefore)` counts its commits. */
  headBefore: string;
}

/** The card's own worktree on `svc/<KEY>` (src/dispatch/git/worktree.ts). */
export type PrepareWorktree = (opts: { repo: string; key: string; baseRef?: string; root?: string }) => Promise<PreparedWorktree>;

/** The branch checked out in the repository itself (`--no-worktree`). */
export type CheckoutInPlace = (opts: { repo: string; key: string; baseRef?: string }) => Promise<PreparedWorktree>;

/** Commits on HEAD since `headBefore`. */
export type CommitsSince = (path: string, headBefore: string) => Promise<number>;

/** The paths of `globs` that differ at `path` from `base` (committed, uncommitted or new). */
export type ChangedPaths = (path: string, base: string, globs: readonly string[]) => Promise<string[]>;

/** What an ancestor is known as; the detail only carries keys, the caller may know titles. */
export interface AncestorInfo {
  key: string;
  title?: string;
  kind?: string;
}

/** What the prompt of a leg says beyond its work item (src/dispatch/prompt.ts). */
export interface PromptContext {
  /** The branch the agent works on, `svc/<KEY>`. */
  branch: string;
  runId: string;
  mode: LegMode;
  /** From `expectsCode(item)`: whether the leg must leave a commit. */
  expectsCode: boolean;
  /** Details of ancestors by key, when the caller read them; otherwise keys alone are shown. */
  ancestors?: ReadonlyMap<string, AncestorInfo> | Readonly<Record<string, AncestorInfo>>;
  /** `run_scope`'s close-out (getCloseOutPrompt): the service's prompt, run once in the scope's branch. */
  closeOut?: { prompt: string; landedKeys: string[] };
  /** Status names that count as done where the service sends no statusCategory (docs/dispatch.md). */
  doneStatuses?: readonly string[];
  /** The repository's workflow (.svc/workflow.yml): its house rules, its check, its ports. */
  workflow?: { rules: string | null; verify: string | null; ports: number };
}

/** The prompt an agent gets for a card. */
export type BuildPrompt = (item: WorkItemDetail, ctx: PromptContext) => string;

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

/** What a leg asks of its agent (the selection picks it from the command): implement, fix or review. */
export type LegMode = 'implement' | 'fix' | 'review';
