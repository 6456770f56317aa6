// What selection hands the lifecycle: the ordered card set (skips included, with their reasons),
// fixed when the run opens, and how the run should treat it.
import { SvcError } from '../../api/errors.js';
import type { DispatchCommand, WorkItemDetail } from '../../contract/types.js';
import type { DispatchService, LegMode } from '../ports.js';

/** One card of the set. */
export interface SelectedCard {
  key: string;
  title: string;
  /** The detail read at selection time (the baseline the pre-leg re-read compares with). */
  item: WorkItemDetail;
  /** Set when the card is recorded but never given to an agent. */
  skipReason: string | null;
  /** Cards of the same set that must be implemented first (blockers inside the set). */
  after: string[];
  /** A human card of the set this one waits on: reaching it stops the run `gated`. */
  gatedBy: string | null;
}

/**
 * What a leg asks of its agent: the selection picks it from the command, the prompt is written for
 * it, and the leg checks its result by it (a review changes nothing).
 */
export type { LegMode } from '../ports.js';

export interface Selection {
  /** The command the run is opened with. */
  command: DispatchCommand;
  /** The command whose semantics the legs follow (differs for `continue`). */
  originalCommand: DispatchCommand;
  cards: SelectedCard[];
  scopeKey: string | null;
  mode: LegMode;
  /** run_scope (and `next` over a container): run the close-out prompt after the legs. */
  closeOut: boolean;
  /** batch/auto: the cap cut the ready set (the run stops `max`, not `drained`). */
  capped: boolean;
  /** Nothing to do (next: nothing ready; batch: no ready leaf): open no run. */
  empty: boolean;
  /** A one-line account for the user (what was picked, or why nothing). */
  note: string;
}

/** Lane filters of batch/auto (and the container/bug lanes of `next`). */
export interface LaneFilters {
  priority?: string[];
  assignee?: string;
  sprint?: string;
  ancestor?: string[];
  kind?: string[];
}

export interface SelectRequest {
  command: DispatchCommand;
  projectKey: string;
  /** run/fix/review: the named keys; run_scope: [KEY]; continue: [RUN_ID]. */
  keys: string[];
  lanes?: LaneFilters;
  /** batch/auto: the most cards given to agents. */
  max?: number;
  /** Keys never to pick (failed earlier in this invocation, conflicts on open, recent failures). */
  exclude?: ReadonlySet<string>;
  /** Status names meaning done where the service sends no statusCategory. */
  doneStatuses?: readonly string[];
  /** `--rerun`: also pick cards an implemented leg recorded on their item (see readyLeavesFilter). */
  rerun?: boolean;
  /**
   * Fleet workers (`auto --per-run`): start at a random card of the first page of ready cards, past
   * those another machine's work on origin covers (SelectDeps.pushedElsewhere), so N workers do not
   * all reach for the same card and meet N-1 409s for it.
   */
  spread?: boolean;
}

/** What selection reads: the service, and local state for `continue`. */
export interface SelectDeps {
  service: Pick<DispatchService, 'getWorkItem' | 'getDispatchRun' | 'listWorkItems' | 'listReadyBugs' | 'listReadyContainers'>;
  /** The recorded original command and scope of a local run, for `continue`. */
  localRun?(runId: string): { originalCommand: DispatchCommand; scopeKey: string | null } | null;
  /** next/batch/auto: why earlier work makes a card skip (prior-work.ts); absent with --rerun. */
  priorWork?(item: WorkItemDetail): Promise<string | null>;
  /**
   * Of `keys`, those another machine's work on origin already covers, known without reading the
   * item (prior-work.ts); a spread selection leaves them out (docs/fleets.md, "Which card a worker
   * reaches for"). Absent with --rerun and on a dry run, which lists every card with its reason.
   */
  pushedElsewhere?(keys: readonly string[]): Promise<ReadonlySet<string>>;
  /**
   * Each selection reads the ready list and what the machines share (origin's branches) afresh:
   * said as it starts. A reselection after a 409 does not say it, and answers from the same reads.
   */
  selectionStarts?(): void;
}

/** A mistake in what was asked (bad key, unknown run): exit 2. */
export class SelectionError extends SvcError {
  readonly kind = 'usage';
  override readonly name = 'SelectionError';
}

/** The status names that count as done where no statusCategory is sent (one list, the prompt's). */
export { DEFAULT_DONE_STATUSES } from '../prompt.js';

/** `1 card`, `2 cards`: counts as a person writes them. */
export function counted(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
