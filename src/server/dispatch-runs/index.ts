// The dispatch-runs module of the local service: openDispatchRun, getDispatchRun, closeDispatchRun, getCloseOutPrompt, appendDispatchEvents, getGitCredential, heartbeatDispatchRun, the hosted run's credential,
// the installation tokens of getGitCredential, and the reaper of silent local runs.
import { registerRunItemAccess } from '../core/access.js';
import type { Database } from '../db.js';
import { runForCaller, toRun } from './store.js';
import type { ServiceModule } from '../kernel.js';
import { closeOutPromptRoute } from './close-out.js';
import { closeRunRoute } from './close.js';
import { gitCredentialRoute } from './credentials.js';
import { appendEvents } from './events.js';
import { heartbeatRoute } from './heartbeat.js';
import { openRun } from './open.js';
import { startReaper } from './reaper.js';
import { DISPATCH_RUNS_SCHEMA } from './schema.js';

export { cardKeysOfRun, checkGitToken, gitTokenRun, mintRunCredential, repositoriesOfRun } from './credentials.js';
export { reapOnce } from './reaper.js';
export { runOwnsWorkItem } from './store.js';

/** A run credential reads only the work items of its own cards (docs/hosted.md; getWorkItem). */
const runHoldsItem = (db: Database, runId: string, workItemId: string): boolean =>
  db.prepare('SELECT 1 FROM dispatch_cards WHERE run_id = ? AND work_item_id = ?').get(runId, workItemId) !== undefined;

// Registered on import: the work-items read (getWorkItem) must be narrowed whenever this module is part
// of the service, whether or not its reaper was started.
registerRunItemAccess(runHoldsItem);

export const dispatchRunsModule: ServiceModule = {
  name: 'dispatch-runs',
  schema: DISPATCH_RUNS_SCHEMA,
  routes: [
    { operationId: 'openDispatchRun', handle: openRun },
    {
      operationId: 'getDispatchRun',
      handle: (ctx) => ({ status: 200, body: toRun(ctx.db, runForCaller(ctx.db, ctx.principal, ctx.params.id ?? '')) }),
    },
    { operationId: 'closeDispatchRun', handle: closeRunRoute },
    { operationId: 'getCloseOutPrompt', handle: closeOutPromptRoute },
    { operationId: 'appendDispatchEvents', handle: appendEvents },
    { operationId: 'getGitCredential', handle: gitCredentialRoute },
    { operationId: 'heartbeatDispatchRun', handle: heartbeatRoute },
  ],
  start: startReaper,
};
