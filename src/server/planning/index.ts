// Planning (openPlanSession, addPlanTurn, submitPlanSession, getPlan, getPlanStatus): threads of turns, submissions that run as background jobs,
// and the plans they produce. Approval, credits and the planner choice are admin functions.
import type { ServiceModule } from '../kernel.js';
import { dropRunner, failOrphanedJobs, reconcilePlans, runnerFor, timingsFromEnv } from './jobs.js';
import { getPlan, getPlanStatus } from './plans.js';
import { addTurn, openSession, submitSession } from './session.js';
import { PLANNING_SCHEMA } from './store.js';

export { approvePlan, type PlanApproval } from './approve.js';
export { reconcilePlans, runnerFor } from './jobs.js';
export { configurePlanner, planCredits, setPlanCredits, type PlannerSetting } from './settings.js';

export const planningModule: ServiceModule = {
  name: 'planning',
  schema: PLANNING_SCHEMA,
  routes: [
    { operationId: 'openPlanSession', handle: openSession },
    { operationId: 'addPlanTurn', handle: addTurn },
    { operationId: 'submitPlanSession', handle: submitSession },
    { operationId: 'getPlan', handle: getPlan },
    { operationId: 'getPlanStatus', handle: getPlanStatus },
  ],
  start({ db, now }) {
    const timings = timingsFromEnv();
    // Jobs left in flight by a previous process can never finish: they failed.
    failOrphanedJobs(db, now());
    const runner = runnerFor(db, now, timings);
    const sweep = () => {
      try {
        reconcilePlans(db, now());
      } catch {
        // The store may be closing; the next sweep (or start) catches up.
      }
    };
    sweep();
    const timer = setInterval(sweep, timings.reconcileEveryMs);
    timer.unref();
    return () => {
      clearInterval(timer);
      runner.stop();
      dropRunner(db);
    };
  },
};
