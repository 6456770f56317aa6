// Moved into ./lifecycle/ (dispatch.ts, existing-run.ts, types.ts); kept one commit so every
// commit builds while importers move.
export { checkMaxCost, runDispatch } from './lifecycle/dispatch.js';
export { runExistingRun, selectionOfRun } from './lifecycle/existing-run.js';
export type { CardSummary, DispatchDeps, DispatchOptions, DispatchTimeouts, RunSummary } from './lifecycle/types.js';
