// What a hosted run is asked to do, read with the run's own credential: the run (getDispatchRun) for
// its command, cards and scope, and each card's work item (getWorkItem, allowed for the run's own
// cards) for what the agent needs, target repositories included.
import type { DispatchCard, DispatchRun, WorkItemDetail } from '../../contract/types.js';

/** The reads a run credential may make (a subset of the API client). */
export interface HostedRunReader {
  getDispatchRun(id: string): Promise<DispatchRun>;
  getWorkItem(key: string): Promise<{ item: WorkItemDetail }>;
}

export interface HostedRun {
  run: DispatchRun;
  command: DispatchRun['command'];
  /** In the run's order, each with its current disposition. */
  cards: DispatchCard[];
  /** The scope the run was opened with (run_scope, fix or review of one item), or null. */
  scope: { workItemId: string | null; label: string | null } | null;
}

/** A card of a hosted run with its work item. */
export interface HostedCard {
  card: DispatchCard;
  item: WorkItemDetail;
}

/** getDispatchRun with the run credential: the command, cards and scope of the run. */
export async function readHostedRun(api: Pick<HostedRunReader, 'getDispatchRun'>, runId: string): Promise<HostedRun> {
  const run = await api.getDispatchRun(runId);
  const scoped = run.scopeWorkItemId !== null || run.scopeLabel !== null;
  return {
    run,
    command: run.command,
    cards: Array.isArray(run.cards) ? run.cards : [],
    scope: scoped ? { workItemId: run.scopeWorkItemId, label: run.scopeLabel } : null,
  };
}

/**
 * The work items of the cards still to run (skipped and settled legs are not read: their items
 * may not be needed, and each read counts against the rate limit).
 */
export async function readHostedCards(api: Pick<HostedRunReader, 'getWorkItem'>, run: HostedRun): Promise<HostedCard[]> {
  const out: HostedCard[] = [];
  for (const card of run.cards) {
    if (!isOpenLeg(card)) continue;
    const { item } = await api.getWorkItem(card.workItemKey);
    out.push({ card, item });
  }
  return out;
}

/** A leg still to run: queued, or running (a container restarted mid-leg). */
export const isOpenLeg = (card: DispatchCard): boolean => card.disposition === 'queued' || card.disposition === 'running';
