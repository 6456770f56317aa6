// The lane filters both ready lanes take (`--priority`, `--assignee`, `--sprint`), as query fields.
import type { LaneFlags } from './flags.js';

/** The filters both ready lanes take, as their table in register.ts declares them. */
export type LaneOptions = LaneFlags;

export function laneFilters(opts: LaneOptions) {
  return {
    ...(opts.priority ? { priority: opts.priority } : {}),
    ...(opts.assignee ? { assigneeId: opts.assignee } : {}),
    ...(opts.sprint ? { sprintId: opts.sprint } : {}),
  };
}
