// Every slice of the local service. A module adds its tables and routes by being listed here; the
// HTTP layer (app.ts) finds each operation's route by its operationId.
import { backlogModule } from './backlog/index.js';
import { coreModule } from './core/index.js';
import { designsModule } from './designs/index.js';
import { dispatchRunsModule } from './dispatch-runs/index.js';
import { foldersModule } from './folders/index.js';
import { gitModule } from './git/index.js';
import type { ServiceModule } from './kernel.js';
import { planningModule } from './planning/index.js';
import { readyModule } from './ready/index.js';
import { createWebModule } from './web/index.js';
import { workItemsModule } from './work-items/index.js';

export const MODULES: readonly ServiceModule[] = [
  coreModule,
  workItemsModule,
  readyModule,
  backlogModule,
  designsModule,
  foldersModule,
  planningModule,
  dispatchRunsModule,
  gitModule,
  createWebModule(),
];
