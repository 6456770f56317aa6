// The lane filters both ready lanes take (`--priority`, `--assignee`, `--sprint`), as query fields.

export interface LaneOptions {
  project?: string;
  priority?: string[];
  assignee?: string;
  sprint?: string;
}

export function laneFilters(opts: LaneOptions) {
  return {
    ...(opts.priority ? { priority: opts.priority } : {}),
    ...(opts.assignee ? { assigneeId: opts.assignee } : {}),
    ...(opts.sprint ? { sprintId: opts.sprint } : {}),
  };
}
