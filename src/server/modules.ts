// Every slice of the local service. A module adds its tables and routes by being listed here; the
// HTTP layer (app.ts) finds each operation's route by its operationId.
import { coreModule } from './core/index.js';
import type { ServiceModule } from './kernel.js';
import { readyModule } from './ready/index.js';
import { workItemsModule } from './work-items/index.js';

export const MODULES: readonly ServiceModule[] = [
  coreModule,
  workItemsModule,
  readyModule,
];
