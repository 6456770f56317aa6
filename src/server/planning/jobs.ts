// Background side of planning: a submitted job asks the planner after the 202 has gone out, then
// fills its plan (generating → planned) or fails. The reconciler later declines a plan whose job
// failed and left it empty (the contract's states and transitions); until it runs, only the job's status shows the failure.
import { transaction, type Database } from '../db.js';
import { iso, newId } from '../ids.js';
import { builtinPlanner, PlannerFailure, runPlannerCommand, type PlannerAnswer, type PlannerInput } from './planners.js';
import { jobById, turnsOf, type JobRow } from './store.js';

export interface PlanningTimings {
  /** Longest a planner command may take, in ms (SVC_PLANNER_TIMEOUT_MS, default 2 minutes). */
  plannerTimeoutMs: number;
  /** How often the reconciler looks, in ms (SVC_PLAN_RECONCILE_MS, default 1 minute). */
  reconcileEveryMs: number;
}

const envMs = (name: string, fallback: number): number => {
  const n = Number(process.env[name]);
  return Number.isFinite(n) && n > 0 ? n : fallback;
};

export const timingsFromEnv = (): PlanningTimings => ({
  plannerTimeoutMs: envMs('SVC_PLANNER_TIMEOUT_MS', 120_000),
  reconcileEveryMs: envMs('SVC_PLAN_RECONCILE_MS', 60_000),
});

/** Runs the jobs of one database; stopping it kills planner processes and stops all writes. */
export class JobRunner {
  private readonly kills = new Set<() => void>();
  private readonly inFlight = new Set<Promise<void>>();
  private stopped = false;

  constructor(
    private readonly db: Database,
    private readonly now: () => Date,
    private readonly timings: PlanningTimings,
  ) {}

  /** Starts the job in the background; the caller's response is not held up by it. */
  launch(jobId: string): void {
    const p: Promise<void> = new Promise<void>((r) => setImmediate(r))
      .then(() => this.run(jobId))
      .catch(() => {
        // A failure to record the outcome (e.g. the store closed under us) leaves the job
        // in flight; the next start marks it failed.
      })
      .finally(() => this.inFlight.delete(p));
    this.inFlight.add(p);
  }

  /** Resolves when every launched job has settled (tests, orderly shutdown). */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  stop(): void {
    this.stopped = true;
    for (const kill of this.kills) kill();
    this.kills.clear();
  }

  private async run(jobId: string): Promise<void> {
    if (this.stopped) return;
    const job = jobById(this.db, jobId);
    if (!job || job.status !== 'queued') return;
    this.db.prepare(`UPDATE plan_jobs SET status = 'running', started_at = ? WHERE id = ?`).run(iso(this.now()), jobId);
    let answer: PlannerAnswer;
    try {
      const input = plannerInput(this.db, job);
      if (job.planner === 'builtin') answer = builtinPlanner(input);
      else {
        const command = job.planner.replace(/^command:/, '');
        answer = await runPlannerCommand(command, input, this.timings.plannerTimeoutMs, (kill) => {
          this.kills.add(kill);
          return () => this.kills.delete(kill);
        });
      }
    } catch (err) {
      if (this.stopped) return;
      const failure = err instanceof PlannerFailure ? err : new PlannerFailure(String(err), true);
      this.db
        .prepare(`UPDATE plan_jobs SET status = 'failed', reachable = ?, error = ?, finished_at = ? WHERE id = ?`)
        .run(failure.reachable ? 1 : 0, failure.message.slice(0, 1000), iso(this.now()), jobId);
      return;
    }
    if (this.stopped) return;
    recordAnswer(this.db, job, answer, iso(this.now()));
  }
}

function plannerInput(db: Database, job: JobRow): PlannerInput {
  const thread = db.prepare('SELECT anchor FROM plan_threads WHERE id = ?').get(job.thread_id) as { anchor: string };
  const project = db.prepare('SELECT key, name FROM projects WHERE id = ?').get(job.project_id) as { key: string; name: string };
  const targetKeys = JSON.parse(thread.anchor) as string[];
  const find = db.prepare('SELECT key, kind, title FROM work_items WHERE project_id = ? AND key = ?');
  const targets = targetKeys.map((k) => find.get(job.project_id, k) as { key: string; kind: string; title: string } | undefined).filter((t) => t !== undefined);
  // The job sends the turns that existed when it was submitted, in order.
  const turns = turnsOf(db, job.thread_id, job.turn_count).map((t) => ({ seq: t.seq, body: t.body, createdAt: t.created_at }));
  return { project, targetKeys, targets, turns };
}

function recordAnswer(db: Database, job: JobRow, answer: PlannerAnswer, now: string): void {
  transaction(db, () => {
    const add = db.prepare(
      `INSERT INTO plan_proposals (id, plan_id, seq, ref, op, proposed_fields, patch, parent_ref, blocked_by_refs, work_item_key, rationale)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    answer.proposals.forEach((p, i) =>
      add.run(
        newId('prp'),
        job.plan_id,
        i + 1,
        p.ref,
        p.op,
        p.proposedFields === null ? null : JSON.stringify(p.proposedFields),
        p.patch === null ? null : JSON.stringify(p.patch),
        p.parentRef,
        JSON.stringify(p.blockedByRefs),
        p.workItemKey,
        p.rationale,
      ),
    );
    db.prepare(`UPDATE plans SET status = 'planned', planned_at = ?, title = ?, summary = ? WHERE id = ? AND status = 'generating'`).run(
      now,
      answer.title,
      answer.summary,
      job.plan_id,
    );
    db.prepare(`UPDATE plan_jobs SET status = 'succeeded', finished_at = ? WHERE id = ?`).run(now, job.id);
  });
}

/** Declines every generating plan that is empty and whose job failed; returns how many. */
export function reconcilePlans(db: Database, now: Date): number {
  return Number(
    db
      .prepare(
        `UPDATE plans SET status = 'declined', decided_at = ?
          WHERE status = 'generating'
            AND source_job_id IN (SELECT id FROM plan_jobs WHERE status = 'failed')
            AND NOT EXISTS (SELECT 1 FROM plan_proposals pp WHERE pp.plan_id = plans.id)`,
      )
      .run(iso(now)).changes,
  );
}

/** At start: a job left in flight by a previous process can never finish; it failed. */
export function failOrphanedJobs(db: Database, now: Date): number {
  return Number(
    db
      .prepare(
        `UPDATE plan_jobs SET status = 'failed', error = 'the service stopped before the job finished', finished_at = ?
          WHERE status IN ('queued', 'running')`,
      )
      .run(iso(now)).changes,
  );
}

const runners = new WeakMap<Database, JobRunner>();

/** The runner of a database, created on first use (start() normally creates it). */
export function runnerFor(db: Database, now: () => Date = () => new Date(), timings: PlanningTimings = timingsFromEnv()): JobRunner {
  let runner = runners.get(db);
  if (!runner) {
    runner = new JobRunner(db, now, timings);
    runners.set(db, runner);
  }
  return runner;
}

/** Forgets a stopped runner so a later start on the same store gets a fresh one. */
export function dropRunner(db: Database): void {
  runners.get(db)?.stop();
  runners.delete(db);
}
