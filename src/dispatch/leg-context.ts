// What every leg of a run shares (LegContext), and the few answers each of its steps asks of it: the
// card's repository, the secrets in play now, and a failure reason fit to show.
import type { DispatchCommand } from '../contract/types.js';
import type { EventStream } from './wire/event-stream.js';
import { createRedactor } from './redact.js';
import type { LegMode } from './select/types.js';
import type { RunPaths } from './state/folder.js';
import type { Workflow } from './workflow/policy.js';
import type { DispatchOptions } from './options.js';
import type { DispatchDeps } from './ports.js';
import type { WrappedArgv } from './process/run-in-group.js';

/** What every leg of one run shares. */
export interface LegContext {
  runId: string;
  command: DispatchCommand;
  mode: LegMode;
  opts: DispatchOptions;
  deps: DispatchDeps;
  stream: EventStream;
  paths: RunPaths;
  /** Aborted when the run must stop its agents (signal, run closed, timeout), or this leg's (reconcile). */
  signal: AbortSignal;
  /** Why this leg was stopped while it ran (its item changed on the service), or null. */
  stoppedBy?(): string | null;
  /** Hears a leg's spend each time its stream reports more (`--max-cost` checks it mid-leg). */
  onSpend?(key: string, costUsd: number): void;
  /** Journals each agent's process group, for `svc runs recover` after a kill -9. */
  onAgentGroup?(key: string, event: 'start' | 'end', pgid: number): void;
  /** Best-of-N: the attempt this agent is (SVC_ATTEMPT); absent outside one. */
  attempt?: number;
  /** Slots of `--parallel` the scheduler holds for this card: how many of its attempts run at once. */
  slots?: number;
  /** Set per leg by the workflow (workflow/leg-steps.ts): SVC_PORT and git's excludes for the agent. */
  workflowEnv?: Record<string, string>;
  /** Set per leg by a normal user's network fence (fence/bwrap.ts): the agent's argv in its namespace. */
  fenceWrap?(argv: readonly string[]): WrappedArgv;
}

/** No repository for a card (a hosted card that names no target repository). */
export class NoRepositoryError extends Error {}

/** The repository `key` works in: `deps.repoFor` (hosted: the card's clone), else `opts.repo`. */
export function repoOf(ctx: Pick<LegContext, 'opts' | 'deps'>, key: string): string {
  if (!ctx.deps.repoFor) return ctx.opts.repo;
  const repo = ctx.deps.repoFor(key);
  if (!repo) throw new NoRepositoryError(`${key} names no target repository`);
  return repo;
}

/**
 * The workflow `key`'s leg runs in: its repository's when the run has one per repository (hosted
 * runs: each clone's), else the run's. A card of no repository has none.
 */
export function workflowOf(ctx: Pick<LegContext, 'opts' | 'deps'>, key: string): Workflow | null {
  const byRepo = ctx.opts.workflows;
  if (!byRepo) return ctx.opts.workflow ?? null;
  try {
    return byRepo[repoOf(ctx, key)] ?? null;
  } catch (error) {
    if (error instanceof NoRepositoryError) return null;
    throw error;
  }
}

/** Every secret in play now: the fixed ones and those minted since (hosted git tokens). */
export function secretsNow(opts: DispatchOptions): readonly string[] {
  return opts.liveSecrets ? [...opts.secrets, ...opts.liveSecrets()] : opts.secrets;
}

/** One line, redacted: what a failure reason may say (git's messages span lines). */
export function reasonLine(text: string, opts: DispatchOptions): string {
  const line = createRedactor(secretsNow(opts))(text)
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .join(' | ');
  return line.length > 300 ? `${line.slice(0, 297)}...` : line;
}
