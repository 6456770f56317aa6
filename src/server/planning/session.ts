// openPlanSession, addPlanTurn, submitPlanSession: open a planning thread, add a turn, submit the thread as one job.
//
// Addressing (docs/service.md): a thread is one project's anchor set (targetKeys sorted and
// de-duplicated; none = the project-wide thread). `sessionId` names a thread directly: an id that
// is not a thread of the project is 404 NOT_FOUND; given with targetKeys that name another anchor
// set it is 422. Anchor keys must be work items of the project (422 otherwise).
import { API_PREFIX } from '../../contract/operations.js';
import type { PlanSessionAddress, PlanSubmitted, PlanTurnInput } from '../../contract/types.js';
import { projectForKey, type ProjectRow } from '../core/access.js';
import { transaction, type Database } from '../db.js';
import { iso, newId } from '../ids.js';
import { invalid, notFound, ServiceError, type Reply, type RequestContext } from '../kernel.js';
import { runnerFor } from './jobs.js';
import { currentPlanner, describePlanner, spendCredit } from './settings.js';
import { anchorOf, isKey, toThread, turnsOf, type ThreadRow } from './store.js';

/** Longest turn body, in characters. */
export const TURN_BODY_MAX = 20_000;

function anchorFromBody(db: Database, project: ProjectRow, keys: unknown): string[] {
  if (!Array.isArray(keys) || keys.some((k) => typeof k !== 'string')) throw invalid('targetKeys must be an array of work item keys');
  const anchor = anchorOf(keys as string[]);
  const find = db.prepare('SELECT 1 FROM work_items WHERE project_id = ? AND key = ?');
  const missing = anchor.filter((k) => !isKey(k) || find.get(project.id, k) === undefined);
  if (missing.length > 0) throw invalid(`targetKeys not work items of project ${project.key}: ${missing.join(', ')}`);
  return anchor;
}

/** The addressed thread; created when `create` and it does not exist yet, else undefined. */
function addressThread(ctx: RequestContext, project: ProjectRow, addr: PlanSessionAddress, create: boolean): ThreadRow | undefined {
  const { db } = ctx;
  const anchor = addr.targetKeys === undefined ? undefined : JSON.stringify(anchorFromBody(db, project, addr.targetKeys));
  if (addr.sessionId !== undefined) {
    if (typeof addr.sessionId !== 'string') throw invalid('sessionId must be a string');
    const thread = db.prepare('SELECT * FROM plan_threads WHERE id = ? AND project_id = ?').get(addr.sessionId, project.id) as ThreadRow | undefined;
    if (!thread) throw notFound('planning session');
    if (anchor !== undefined && anchor !== thread.anchor) throw invalid('sessionId names a thread with other targetKeys');
    return thread;
  }
  const key = anchor ?? '[]';
  const existing = db.prepare('SELECT * FROM plan_threads WHERE project_id = ? AND anchor = ?').get(project.id, key) as ThreadRow | undefined;
  if (existing || !create) return existing;
  const now = iso(ctx.now());
  const thread: ThreadRow = {
    id: newId('pth'),
    project_id: project.id,
    anchor: key,
    last_job_id: null,
    last_submitted_at: null,
    created_at: now,
    updated_at: now,
  };
  db.prepare('INSERT INTO plan_threads (id, project_id, anchor, last_job_id, last_submitted_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)').run(
    thread.id,
    thread.project_id,
    thread.anchor,
    null,
    null,
    now,
    now,
  );
  return thread;
}

const bodyOf = <T>(ctx: RequestContext): T => {
  const body = ctx.body ?? {};
  if (typeof body !== 'object' || Array.isArray(body)) throw invalid('the body must be a JSON object');
  return body as T;
};

export function openSession(ctx: RequestContext): Reply {
  const project = projectForKey(ctx.db, ctx.principal, ctx.params.projectKey!);
  const addr = bodyOf<PlanSessionAddress>(ctx);
  return transaction(ctx.db, () => {
    const thread = addressThread(ctx, project, addr, true)!;
    return { status: 200, body: toThread(ctx.db, thread) };
  });
}

export function addTurn(ctx: RequestContext): Reply {
  const project = projectForKey(ctx.db, ctx.principal, ctx.params.projectKey!);
  const input = bodyOf<PlanTurnInput>(ctx);
  if (typeof input.body !== 'string' || input.body.trim().length === 0) throw invalid('body must be a non-empty string');
  if (input.body.length > TURN_BODY_MAX) throw invalid(`body is longer than ${TURN_BODY_MAX} characters`);
  return transaction(ctx.db, () => {
    const thread = addressThread(ctx, project, input, true)!;
    // A turn added while the thread's job runs would belong to no submission's input and silently
    // miss the plan being generated; the caller waits for the job instead.
    const last = thread.last_job_id
      ? (ctx.db.prepare('SELECT status FROM plan_jobs WHERE id = ?').get(thread.last_job_id) as { status: string } | undefined)
      : undefined;
    if (last && (last.status === 'queued' || last.status === 'running')) {
      throw new ServiceError(409, 'CONFLICT', `a submission of this thread is in flight (job ${thread.last_job_id}); add turns when it has finished`);
    }
    const now = iso(ctx.now());
    const seq = turnsOf(ctx.db, thread.id).length + 1;
    const author = ctx.principal.kind === 'pat' ? ctx.principal.userId : null;
    ctx.db
      .prepare('INSERT INTO plan_turns (id, thread_id, seq, author_id, body, created_at) VALUES (?, ?, ?, ?, ?, ?)')
      .run(newId('ptn'), thread.id, seq, author, input.body, now);
    ctx.db.prepare('UPDATE plan_threads SET updated_at = ? WHERE id = ?').run(now, thread.id);
    return { status: 200, body: toThread(ctx.db, { ...thread, updated_at: now }) };
  });
}

export function submitSession(ctx: RequestContext): Reply {
  const project = projectForKey(ctx.db, ctx.principal, ctx.params.projectKey!);
  const addr = bodyOf<PlanSessionAddress>(ctx);
  const submitted = transaction(ctx.db, () => {
    const thread = addressThread(ctx, project, addr, false);
    const turnCount = thread ? turnsOf(ctx.db, thread.id).length : 0;
    if (!thread || turnCount === 0) throw invalid('the thread has no turns to submit');
    // Checked before credits: an unavailable dependency must not cost anything.
    const planner = currentPlanner(ctx.db);
    if (!planner) throw new ServiceError(503, 'UNAVAILABLE', 'no planning dependency is configured; retry later');
    if (!spendCredit(ctx.db, project.workspace_id)) {
      throw new ServiceError(402, 'ENTITLEMENT_EXHAUSTED', 'the workspace has no AI credits left');
    }
    const now = iso(ctx.now());
    const planId = newId('plan');
    const jobId = newId('job');
    // A newer submission supersedes the thread's earlier open plans.
    ctx.db.prepare(`UPDATE plans SET status = 'stale' WHERE thread_id = ? AND status = 'planned'`).run(thread.id);
    ctx.db
      .prepare(
        `INSERT INTO plans (id, project_id, thread_id, status, origin, source_job_id, created_by, created_at)
         VALUES (?, ?, ?, 'generating', 'user', ?, ?, ?)`,
      )
      .run(planId, project.id, thread.id, jobId, ctx.principal.kind === 'pat' ? ctx.principal.userId : null, now);
    ctx.db
      .prepare(
        `INSERT INTO plan_jobs (id, plan_id, thread_id, project_id, status, planner, turn_count, created_at)
         VALUES (?, ?, ?, ?, 'queued', ?, ?, ?)`,
      )
      .run(jobId, planId, thread.id, project.id, describePlanner(planner), turnCount, now);
    ctx.db.prepare('UPDATE plan_threads SET last_job_id = ?, last_submitted_at = ?, updated_at = ? WHERE id = ?').run(jobId, now, now, thread.id);
    return { jobId, planId };
  });
  runnerFor(ctx.db, ctx.now).launch(submitted.jobId);
  const body: PlanSubmitted = {
    ...submitted,
    statusUrl: `${ctx.config.baseUrl}${API_PREFIX}/plans/${submitted.planId}/status`,
  };
  return { status: 202, body };
}
