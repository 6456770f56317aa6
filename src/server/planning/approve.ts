// Approval of a plan "in the product" (the contract's states and transitions): the only way a proposal becomes a work item.
// The contract shows no operation for it, so the local service exposes it as an admin function.
// All or nothing: one transaction, and any proposal that no longer fits refuses the whole plan.
import type { Kind } from '../../contract/types.js';
import { transaction, type Database } from '../db.js';
import { iso } from '../ids.js';
import { ServiceError } from '../kernel.js';
import { rowById, rowByKey, type WorkItemRow } from '../work-items/rows.js';
import { insertWorkItem, touch, updateColumns, type ColumnChanges } from '../work-items/store.js';
import { checkChildrenFit, checkPlacement } from '../work-items/tree.js';
import { planById, proposalsOf, type ProposalRow } from './store.js';

export interface PlanApproval {
  planId: string;
  /** Keys of the work items created by `add` proposals, in proposal order. */
  createdKeys: string[];
  modifiedKeys: string[];
  removedKeys: string[];
}

/** Proposal fields → work item columns. */
const COLUMNS: Record<string, string> = {
  kind: 'kind',
  title: 'title',
  descriptionMd: 'description_md',
  priority: 'priority',
  type: 'type',
  estimateMinutes: 'estimate_minutes',
  storyPoints: 'story_points',
};

/** Open plans (`planned`, `stale`) may be approved; anything else is refused with an Error. */
export function approvePlan(db: Database, planId: string, opts: { now?: Date; approverId?: string } = {}): PlanApproval {
  const now = opts.now ?? new Date();
  try {
    return transaction(db, () => approveIn(db, planId, now, opts.approverId));
  } catch (err) {
    // The admin API speaks plain errors; a 422 from the shared work item rules becomes one too.
    if (err instanceof ServiceError) throw new Error(`plan ${planId} cannot be approved: ${err.message}`);
    throw err;
  }
}

function approveIn(db: Database, planId: string, now: Date, approverId: string | undefined): PlanApproval {
  const plan = planById(db, planId);
  if (!plan) throw new Error(`no plan ${planId}`);
  if (plan.status !== 'planned' && plan.status !== 'stale') throw new Error(`plan ${planId} is ${plan.status}, not open for approval`);
  const proposals = proposalsOf(db, planId);
  const byRef = new Map(proposals.map((p) => [p.ref, p]));
  // A modify or remove proposal's ref names its existing item; an add's, the item it creates.
  const keyOfRef = new Map<string, string>(proposals.filter((p) => p.op !== 'add').map((p) => [p.ref, p.work_item_key!]));
  const item = (ref: string): WorkItemRow => {
    const key = keyOfRef.get(ref) ?? (byRef.has(ref) ? undefined : ref);
    const row = key === undefined ? undefined : rowByKey(db, key);
    if (!row || row.project_id !== plan.project_id) throw new Error(`plan ${planId}: ${ref} is not a work item of the plan's project`);
    return row;
  };
  const reporterId =
    approverId ??
    plan.created_by ??
    (
      db.prepare('SELECT m.user_id FROM memberships m JOIN projects p ON p.workspace_id = m.workspace_id WHERE p.id = ? LIMIT 1').get(plan.project_id) as
        | { user_id: string }
        | undefined
    )?.user_id;
  if (!reporterId) throw new Error(`plan ${planId}: nobody to record as reporter`);

  const result: PlanApproval = { planId, createdKeys: [], modifiedKeys: [], removedKeys: [] };
  const setKey = db.prepare('UPDATE plan_proposals SET work_item_key = ? WHERE id = ?');
  for (const p of addsParentsFirst(proposals, byRef)) {
    const fields = JSON.parse(p.proposed_fields ?? '{}') as Record<string, unknown>;
    const kind = (fields.kind ?? 'task') as Kind;
    const parent = p.parent_ref === null ? null : item(p.parent_ref);
    checkPlacement(db, kind, parent, plan.project_id);
    const row = insertWorkItem(
      db,
      {
        projectId: plan.project_id,
        kind,
        title: String(fields.title).trim(),
        reporterId,
        parentId: parent?.id ?? null,
        descriptionMd: fields.descriptionMd as string | null | undefined,
        priority: fields.priority as string | undefined,
        type: fields.type as string | null | undefined,
        estimateMinutes: fields.estimateMinutes as number | null | undefined,
        storyPoints: fields.storyPoints as number | null | undefined,
        extra: { planningSource: 'native', planId },
      },
      now,
    );
    keyOfRef.set(p.ref, row.key);
    setKey.run(row.key, p.id);
    result.createdKeys.push(row.key);
  }
  for (const p of proposals) {
    if (p.op === 'add') continue;
    const target = item(p.work_item_key!);
    if (p.op === 'remove') {
      updateColumns(db, target.id, { archived_at: iso(now) }, now);
      result.removedKeys.push(target.key);
      continue;
    }
    const patch = JSON.parse(p.patch ?? '{}') as Record<string, unknown>;
    const changes: ColumnChanges = {};
    for (const [field, value] of Object.entries(patch)) changes[COLUMNS[field]!] = value as string | number | null;
    const kind = (patch.kind ?? target.kind) as Kind;
    const parent = p.parent_ref !== null ? item(p.parent_ref) : target.parent_id ? (rowById(db, target.parent_id) ?? null) : null;
    checkPlacement(db, kind, parent, plan.project_id, target.id);
    if (patch.kind !== undefined) checkChildrenFit(db, target.id, kind);
    if (p.parent_ref !== null) changes.parent_id = parent!.id;
    updateColumns(db, target.id, changes, now);
    result.modifiedKeys.push(target.key);
  }
  // Dependencies last: every ref now names a work item.
  const link = db.prepare(`INSERT OR IGNORE INTO work_item_links (from_id, to_id, kind) VALUES (?, ?, 'blocks')`);
  for (const p of proposals) {
    if (p.op === 'remove') continue;
    const blocked = item(p.op === 'add' ? keyOfRef.get(p.ref)! : p.work_item_key!);
    for (const ref of JSON.parse(p.blocked_by_refs) as string[]) {
      const blocker = item(ref);
      link.run(blocker.id, blocked.id);
      touch(db, blocker.id, now);
      touch(db, blocked.id, now);
    }
  }
  db.prepare(`UPDATE plans SET status = 'approved', decided_at = ? WHERE id = ?`).run(iso(now), planId);
  return result;
}

/** The `add` proposals ordered so a parent proposal is created before its children. */
function addsParentsFirst(proposals: readonly ProposalRow[], byRef: Map<string, ProposalRow>): ProposalRow[] {
  const out: ProposalRow[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (p: ProposalRow) => {
    if (state.get(p.ref) === 'done') return;
    if (state.get(p.ref) === 'visiting') throw new Error(`proposal ${p.ref} is its own ancestor`);
    state.set(p.ref, 'visiting');
    const parent = p.parent_ref === null ? undefined : byRef.get(p.parent_ref);
    if (parent?.op === 'add') visit(parent);
    state.set(p.ref, 'done');
    out.push(p);
  };
  for (const p of proposals) if (p.op === 'add') visit(p);
  return out;
}
