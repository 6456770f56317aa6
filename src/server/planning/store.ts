// Planning tables and their wire shapes: threads of turns (one per project per anchor set), jobs
// that send a thread's turns to the planning dependency, and the plans those jobs fill.
import { KEY_PATTERN, type Plan, type PlanProposal, type PlanStatusView, type PlanningThread } from '../../contract/types.js';
import type { Database } from '../db.js';

export const PLANNING_SCHEMA = `
CREATE TABLE IF NOT EXISTS plan_threads (
  id TEXT PRIMARY KEY, project_id TEXT NOT NULL REFERENCES projects(id), anchor TEXT NOT NULL,
  last_job_id TEXT, last_submitted_at TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
  UNIQUE (project_id, anchor));
CREATE TABLE IF NOT EXISTS plan_turns (
  id TEXT PRIMARY KEY, thread_id TEXT NOT NULL REFERENCES plan_threads(id), seq INTEGER NOT NULL,
  author_id TEXT, body TEXT NOT NULL, created_at TEXT NOT NULL, UNIQUE (thread_id, seq));
CREATE TABLE IF NOT EXISTS plans (
  id TEXT PRIMARY KEY, project_id TEXT NOT NULL REFERENCES projects(id),
  thread_id TEXT REFERENCES plan_threads(id), status TEXT NOT NULL, origin TEXT NOT NULL DEFAULT 'user',
  title TEXT, summary TEXT, source_job_id TEXT, created_by TEXT,
  created_at TEXT NOT NULL, planned_at TEXT, decided_at TEXT);
CREATE TABLE IF NOT EXISTS plan_proposals (
  id TEXT PRIMARY KEY, plan_id TEXT NOT NULL REFERENCES plans(id), seq INTEGER NOT NULL,
  ref TEXT NOT NULL, op TEXT NOT NULL, proposed_fields TEXT, patch TEXT, parent_ref TEXT,
  blocked_by_refs TEXT NOT NULL DEFAULT '[]', work_item_key TEXT, rationale TEXT,
  UNIQUE (plan_id, seq));
CREATE TABLE IF NOT EXISTS plan_jobs (
  id TEXT PRIMARY KEY, plan_id TEXT NOT NULL REFERENCES plans(id),
  thread_id TEXT NOT NULL REFERENCES plan_threads(id), project_id TEXT NOT NULL REFERENCES projects(id),
  status TEXT NOT NULL, reachable INTEGER NOT NULL DEFAULT 1, planner TEXT NOT NULL, error TEXT,
  turn_count INTEGER NOT NULL, created_at TEXT NOT NULL, started_at TEXT, finished_at TEXT);
CREATE TABLE IF NOT EXISTS plan_credits (workspace_id TEXT PRIMARY KEY, remaining INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS planning_settings (name TEXT PRIMARY KEY, value TEXT NOT NULL);
`;

/** Job states: `queued` and `running` are "in flight". */
export type JobStatus = 'queued' | 'running' | 'succeeded' | 'failed';

export interface ThreadRow {
  id: string;
  project_id: string;
  anchor: string;
  last_job_id: string | null;
  last_submitted_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface TurnRow {
  id: string;
  thread_id: string;
  seq: number;
  author_id: string | null;
  body: string;
  created_at: string;
}

export interface PlanRow {
  id: string;
  project_id: string;
  thread_id: string | null;
  status: string;
  origin: string;
  title: string | null;
  summary: string | null;
  source_job_id: string | null;
  created_by: string | null;
  created_at: string;
  planned_at: string | null;
  decided_at: string | null;
}

export interface ProposalRow {
  id: string;
  plan_id: string;
  seq: number;
  ref: string;
  op: string;
  proposed_fields: string | null;
  patch: string | null;
  parent_ref: string | null;
  blocked_by_refs: string;
  work_item_key: string | null;
  rationale: string | null;
}

export interface JobRow {
  id: string;
  plan_id: string;
  thread_id: string;
  project_id: string;
  status: JobStatus;
  reachable: number;
  planner: string;
  error: string | null;
  turn_count: number;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
}

/** Keys compared by project, then number, so `P-2` sorts before `P-10`. */
function compareKeys(a: string, b: string): number {
  const [pa = '', na = '0'] = a.split('-');
  const [pb = '', nb = '0'] = b.split('-');
  return pa < pb ? -1 : pa > pb ? 1 : Number(na) - Number(nb);
}

/** The anchor set as stored: sorted and de-duplicated, so order and repeats do not matter. */
export function anchorOf(targetKeys: readonly string[]): string[] {
  return [...new Set(targetKeys)].sort(compareKeys);
}

export const isKey = (k: string): boolean => KEY_PATTERN.test(k);

export const turnsOf = (db: Database, threadId: string, upToSeq = Number.MAX_SAFE_INTEGER): TurnRow[] =>
  db.prepare('SELECT * FROM plan_turns WHERE thread_id = ? AND seq <= ? ORDER BY seq').all(threadId, upToSeq) as unknown as TurnRow[];

export const jobById = (db: Database, id: string): JobRow | undefined => db.prepare('SELECT * FROM plan_jobs WHERE id = ?').get(id) as JobRow | undefined;

export const planById = (db: Database, id: string): PlanRow | undefined => db.prepare('SELECT * FROM plans WHERE id = ?').get(id) as PlanRow | undefined;

export const proposalsOf = (db: Database, planId: string): ProposalRow[] =>
  db.prepare('SELECT * FROM plan_proposals WHERE plan_id = ? ORDER BY seq').all(planId) as unknown as ProposalRow[];

export function toThread(db: Database, t: ThreadRow): PlanningThread {
  const turns = turnsOf(db, t.id);
  return {
    id: t.id,
    targetKeys: JSON.parse(t.anchor) as string[],
    turnCount: turns.length,
    lastJobId: t.last_job_id,
    lastSubmittedAt: t.last_submitted_at,
    createdAt: t.created_at,
    updatedAt: t.updated_at,
    turns: turns.map((turn) => ({
      id: turn.id,
      seq: turn.seq,
      body: turn.body,
      authorId: turn.author_id,
      createdAt: turn.created_at,
    })),
  };
}

const parseJson = <T>(text: string | null, fallback: T): T => (text === null ? fallback : (JSON.parse(text) as T));

export function toProposal(p: ProposalRow): PlanProposal {
  return {
    id: p.id,
    ref: p.ref,
    op: p.op,
    proposedFields: parseJson<Record<string, unknown> | null>(p.proposed_fields, null),
    patch: parseJson<Record<string, unknown> | null>(p.patch, null),
    parentRef: p.parent_ref,
    blockedByRefs: parseJson<string[]>(p.blocked_by_refs, []),
    workItemKey: p.work_item_key,
    rationale: p.rationale,
  };
}

const proposalCount = (db: Database, planId: string): number =>
  (db.prepare('SELECT COUNT(*) AS n FROM plan_proposals WHERE plan_id = ?').get(planId) as { n: number }).n;

export function toPlan(db: Database, plan: PlanRow): Plan {
  const proposals = proposalsOf(db, plan.id).map(toProposal);
  return {
    id: plan.id,
    status: plan.status,
    origin: plan.origin,
    title: plan.title,
    summary: plan.summary,
    sourceJobId: plan.source_job_id,
    proposalCount: proposals.length,
    createdAt: plan.created_at,
    plannedAt: plan.planned_at,
    decidedAt: plan.decided_at,
    proposals,
  };
}

export function toPlanStatus(db: Database, plan: PlanRow): PlanStatusView {
  const job = plan.source_job_id ? jobById(db, plan.source_job_id) : undefined;
  return {
    planId: plan.id,
    status: plan.status,
    origin: plan.origin,
    jobId: plan.source_job_id,
    proposalCount: proposalCount(db, plan.id),
    createdAt: plan.created_at,
    plannedAt: plan.planned_at,
    decidedAt: plan.decided_at,
    job: job
      ? {
          id: job.id,
          status: job.status,
          reachable: job.reachable === 1,
          error: job.error,
          createdAt: job.created_at,
          startedAt: job.started_at,
          finishedAt: job.finished_at,
        }
      : null,
  };
}
