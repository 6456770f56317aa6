// Backlog (listBacklog, moveToBacklog) and the sprint references the ready lanes resolve.
import type { ServiceModule } from '../kernel.js';
import { listBacklog } from './list.js';
import { moveToBacklog } from './move.js';

export { resolveSprint } from './sprints.js';
export { BACKLOG_MOVE_MAX } from './move.js';

export const backlogModule: ServiceModule = {
  name: 'backlog',
  // Sprints and work_items.sprint_id/rank are core tables (schema-core.ts).
  schema: '',
  routes: [
    { operationId: 'listBacklog', handle: listBacklog },
    { operationId: 'moveToBacklog', handle: moveToBacklog },
  ],
};
