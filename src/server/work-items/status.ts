// Work item statuses of the local service and their categories (docs/service.md). The contract
// leaves status values open; the `done` category drives readiness, the backlog and the lanes.
import type { StatusCategory } from '../../contract/types.js';

export const STATUS_CATEGORY: Record<string, StatusCategory> = {
  todo: 'todo',
  in_progress: 'in_progress',
  in_review: 'in_progress',
  done: 'done',
  cancelled: 'done',
};
export const STATUSES = Object.keys(STATUS_CATEGORY);
export const DONE_STATUSES = STATUSES.filter((s) => STATUS_CATEGORY[s] === 'done');

export const categoryOf = (status: string): StatusCategory => STATUS_CATEGORY[status] ?? 'todo';
export const isDone = (status: string): boolean => categoryOf(status) === 'done';

/** SQL list literal of the done statuses, e.g. `('done','cancelled')` (constants, not input). */
export const DONE_SQL = `(${DONE_STATUSES.map((s) => `'${s}'`).join(',')})`;

/** Statuses of a category, for the filter's `statusCategory` field. */
export const statusesIn = (category: string): string[] => STATUSES.filter((s) => STATUS_CATEGORY[s] === category);

/**
 * Statuses the ready lanes leave out though the item is still open: `in_review` is work that exists
 * and waits for a person (svc records an implemented leg so, docs/fleets.md), not work to hand out.
 */
export const LANE_SKIPPED_STATUSES = ['in_review'];
export const inLanes = (status: string): boolean => !LANE_SKIPPED_STATUSES.includes(status);
/** SQL condition on `w.status` for the lanes (constants, not input). */
export const IN_LANES_SQL = `w.status NOT IN (${LANE_SKIPPED_STATUSES.map((s) => `'${s}'`).join(',')})`;
