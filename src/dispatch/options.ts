// A run's options, one type from the command's flags to run.json and back: what a command hands
// the engine (DispatchOptions), what run.json keeps of them so that `continue` runs the legs
// again as the original run did (RecordedOptions, docs/dispatch.md), and how they are read back.
// Kept free of the engine's modules: every command may load it.
import type { DispatchCommand } from '../contract/types.js';
import type { AgentChoice } from './agent/presets.js';
import { AGENT_FORMATS } from './agent/spend.js';
import type { AgentPoolSpec } from './boundary/user.js';
import type { NetworkPolicy } from './fence/index.js';
import type { GitIdentity } from './git/identity.js';
import type { RunBase } from './git/worktree.js';
import type { LaneFilters } from './select/types.js';
import { readFlagOptions, recordFlagOptions } from './flags/fill.js';
import type { FlagOptions, ReplayedOptions } from './flags/table.js';
import type { Workflow } from './workflow/policy.js';

/** A run's timeouts: the flags' (table.ts), and how long the close may wait for pending events. */
export interface DispatchTimeouts extends FlagTimeouts {
  /** How long the close (and an interruption) may wait for pending events (default 10 s for
   * signals; a normal close waits up to the stream's own give-up time). */
  flushMs?: number;
}

type FlagTimeouts = FlagOptions['timeouts'];

/**
 * What a command hands the engine: the options the flags' rows fill (their types are the rows',
 * src/dispatch/flags/table.ts), and what the command settles itself.
 */
export interface DispatchOptions extends Omit<FlagOptions, 'timeouts'> {
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
  /**
   * Re-reading running legs' items (reconcile.ts): false is `--no-reconcile`; `floorMs` is how seldom
   * a card may be read at most (default 30 s; engine tests shorten it as they shorten the heartbeat).
   */
  reconcile?: false | { floorMs?: number };
  timeouts: DispatchTimeouts;
  /** `--max-wait`: the run gives up on an unreachable service after this long, heartbeats included. */
  giveUpAfterMs?: number;
  lanes?: LaneFilters;
  doneStatuses?: readonly string[];
  /** Secrets in play (SVC_TOKEN, SVC_RUN_TOKEN, git tokens): redacted from every log line. */
  secrets: readonly string[];
  /**
   * Secrets that appear while the run goes on (a hosted run's git tokens, minted again before they
   * expire): asked again for every piece of agent output and every failure reason.
   */
  liveSecrets?: () => readonly string[];
  /** Heartbeats from open to close (default true). A hosted run sends none: its credential may not. */
  heartbeat?: boolean;
  /** Push an implemented leg's branch through `deps.pushBranch` (hosted runs: on by default). */
  push?: boolean;
  /** `--pr`: after a pushed leg, open or update its pull request; review posts, fix comments (hosted: on by default). */
  pr?: boolean;
  /** `--draft`: pull requests are opened as drafts. */
  draft?: boolean;
  /** svc's environment: agents and workflow steps get what agentEnv's allowlist passes of it. */
  env: NodeJS.ProcessEnv;
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
  /** What a leg's processes may reach (docs/trust.md); absent or `open`: anything. */
  network?: NetworkPolicy | null;
  /** The one line that says it, when the first agent starts (run-options' networkFor). */
  networkLine?: string | null;
}

export { MAX_ATTEMPTS } from './limits.js';

/**
 * run.json's `options`, exactly as they are written: those of the flags' rows that `continue`
 * gives again (`replay`), and what the command settles itself; the types are DispatchOptions' own.
 */
export type RecordedOptions = ReplayedOptions &
  Pick<DispatchOptions, 'repo' | 'agent' | 'attempts' | 'agents'> & {
    lanes: LaneFilters | null;
    idempotencyKey: string | null;
    push: boolean;
    origin: 'local' | 'hosted';
    pr: boolean;
    draft: boolean;
    /** `--verify CMD` / `--no-verify` (false) and `--setup CMD` as given. */
    verify?: string | false;
    setup?: string;
  };

/** What run.json keeps of a run's options: no secret, nothing of the environment. */
export function recordedOptions(opts: DispatchOptions, idempotencyKey: string | null, origin: 'local' | 'hosted'): RecordedOptions {
  return {
    repo: opts.repo,
    agent: opts.agent,
    ...recordFlagOptions(opts),
    lanes: opts.lanes ?? null,
    idempotencyKey,
    push: opts.push ?? false,
    origin,
    pr: opts.pr ?? false,
    draft: opts.draft ?? false,
    ...(opts.workflowFlags?.verify !== undefined ? { verify: opts.workflowFlags.verify } : {}),
    ...(opts.workflowFlags?.setup !== undefined ? { setup: opts.workflowFlags.setup } : {}),
    ...(opts.attempts !== undefined ? { attempts: opts.attempts } : {}),
    ...(opts.agents ? { agents: opts.agents } : {}),
  };
}

const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const count = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const yes = (v: unknown): boolean | undefined => (typeof v === 'boolean' ? v : undefined);
const record = (v: unknown): Record<string, unknown> | undefined =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;

function agentOf(v: unknown): AgentChoice | undefined {
  const a = record(v);
  if (!a) return undefined;
  const stream = Object.values(AGENT_FORMATS).find((s) => s === a.stream);
  const [agent, agentCmd, model] = [text(a.agent), text(a.agentCmd), text(a.model)];
  return {
    ...(agent !== undefined ? { agent } : {}),
    ...(agentCmd !== undefined ? { agentCmd } : {}),
    ...(model !== undefined ? { model } : {}),
    ...(stream ? { stream } : {}),
  };
}

type Settled = Exclude<keyof RecordedOptions, keyof ReplayedOptions>;

/** How each option the command settles is read back (the rows' own: readFlagOptions): its value when it has the shape written, else undefined. */
const READ: { [K in Settled]-?: (v: unknown) => RecordedOptions[K] | undefined } = {
  repo: text,
  agent: agentOf,
  attempts: count,
  // An attempt whose agent cannot be read leaves a hole: `continue` then takes none of them.
  agents: (v) => (Array.isArray(v) ? v.map((a) => agentOf(a) ?? {}) : undefined),
  lanes: (v) => (v === null ? null : (record(v) as LaneFilters | undefined)),
  idempotencyKey: (v) => (v === null ? null : text(v)),
  push: yes,
  origin: (v) => (v === 'local' || v === 'hosted' ? v : undefined),
  pr: yes,
  draft: yes,
  verify: (v) => (v === false ? false : text(v)),
  setup: text,
};

/**
 * run.json's `options` as read from the file: each option the shape it was written in, or left
 * out (a run.json of an older svc, a file edited by hand); nothing else is kept.
 */
export function readRecordedOptions(raw: unknown): Partial<RecordedOptions> {
  const given = record(raw) ?? {};
  const out: Partial<Record<keyof RecordedOptions, unknown>> = { ...readFlagOptions(raw) };
  for (const key of Object.keys(READ) as Settled[]) {
    const value = READ[key](given[key]);
    if (value !== undefined) out[key] = value;
  }
  return out as Partial<RecordedOptions>;
}
