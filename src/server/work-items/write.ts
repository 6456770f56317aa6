// createWorkItem (create) and 9 (update). The update is a merge: absent fields are untouched, null
// clears, `If-Match` guards against a lost update (412), and without it the last write wins.
// Every rule of the bodies themselves (the contract's fields: fields, types, enums, bounds, patterns, required
// fields, unknown properties) is the contract document's WorkItemCreate/WorkItemUpdate schema,
// which app.ts enforces before any route runs; the rules here are the ones a schema cannot state.
import type { Kind, WorkItemCreate, WorkItemUpdate } from '../../contract/types.js';
import { projectById, projectForKey } from '../core/access.js';
import { transaction, type Database } from '../db.js';
import { invalid, ServiceError, type Principal, type RequestContext, type Route } from '../kernel.js';
import { buildDetail, etagOf, ifMatchHolds, itemForKey } from './detail.js';
import { rowByKey, type WorkItemRow } from './rows.js';
import { insertWorkItem, updateColumns, type ColumnChanges } from './store.js';
import { checkChildrenFit, checkPlacement } from './tree.js';

/** The validated body, its dueDate normalised so date filters compare stored values as text. */
function fieldsOf<Body extends WorkItemUpdate>(body: unknown): Body {
  const fields = { ...(body as Body) };
  if (typeof fields.dueDate === 'string') fields.dueDate = new Date(Date.parse(fields.dueDate)).toISOString();
  return fields;
}

function parentRow(db: Database, principal: Principal, key: string): WorkItemRow {
  const row = rowByKey(db, key);
  // A parent the caller cannot see is reported like a missing one, without revealing it exists.
  if (!row || !projectById(db, principal, row.project_id)) throw invalid(`parentKey: no work item ${key}`);
  return row;
}

function checkAssignee(db: Database, workspaceId: string, assigneeId: string | null | undefined): void {
  if (!assigneeId) return;
  const member = db.prepare('SELECT 1 FROM memberships WHERE workspace_id = ? AND user_id = ?').get(workspaceId, assigneeId);
  if (!member) throw invalid(`assigneeId: ${assigneeId} is not a member of the workspace`);
}

function userOf(principal: Principal): string {
  if (principal.kind !== 'pat') throw new ServiceError(403, 'FORBIDDEN', 'a run credential may not write work items');
  return principal.userId;
}

export const createWorkItem: Route = {
  operationId: 'createWorkItem',
  handle(ctx: RequestContext) {
    const { db, principal } = ctx;
    const project = projectForKey(db, principal, ctx.params.projectKey!);
    const f = fieldsOf<WorkItemCreate>(ctx.body);
    const reporterId = userOf(principal);
    const row = transaction(db, () => {
      const parent = f.parentKey ? parentRow(db, principal, f.parentKey) : null;
      checkPlacement(db, f.kind, parent, project.id);
      checkAssignee(db, project.workspace_id, f.assigneeId);
      return insertWorkItem(
        db,
        {
          projectId: project.id,
          kind: f.kind,
          title: f.title,
          reporterId,
          parentId: parent?.id ?? null,
          descriptionMd: f.descriptionMd,
          priority: f.priority,
          type: f.type,
          executor: f.executor,
          storyPoints: f.storyPoints,
          estimateMinutes: f.estimateMinutes,
          targetRepo: f.targetRepo,
          targetRepos: f.targetRepos,
          targetRepositories: f.targetRepositories,
          assigneeId: f.assigneeId,
          dueDate: f.dueDate,
        },
        ctx.now(),
      );
    });
    return {
      status: 201,
      body: buildDetail(db, row),
      headers: { ETag: etagOf(row), Location: `/api/v1/work-items/${row.key}` },
    };
  },
};

/** Field → column for the plain fields of the update body. */
const PLAIN: Partial<Record<keyof WorkItemUpdate, string>> = {
  title: 'title',
  descriptionMd: 'description_md',
  priority: 'priority',
  type: 'type',
  executor: 'executor',
  storyPoints: 'story_points',
  estimateMinutes: 'estimate_minutes',
  targetRepo: 'target_repo',
  assigneeId: 'assignee_id',
  dueDate: 'due_date',
};

export const updateWorkItem: Route = {
  operationId: 'updateWorkItem',
  handle(ctx: RequestContext) {
    const { db, principal } = ctx;
    userOf(principal);
    const f = fieldsOf<WorkItemUpdate>(ctx.body);
    const ifMatch = ctx.headers['if-match'];
    const row = transaction(db, () => {
      const current = itemForKey(db, principal, ctx.params.key!);
      if (typeof ifMatch === 'string' && !ifMatchHolds(ifMatch, current)) {
        throw new ServiceError(412, 'PRECONDITION_FAILED', `work item ${current.key} changed since that ETag was read`);
      }
      const changes: ColumnChanges = {};
      for (const [field, column] of Object.entries(PLAIN)) {
        const v = f[field as keyof WorkItemUpdate];
        if (v !== undefined) changes[column] = v as string | number | null;
      }
      if (f.targetRepos !== undefined) changes.target_repos = JSON.stringify(f.targetRepos);
      if (f.targetRepositories !== undefined) changes.target_repositories = JSON.stringify(f.targetRepositories);
      if (f.assigneeId !== undefined) {
        const project = db.prepare('SELECT workspace_id FROM projects WHERE id = ?').get(current.project_id) as { workspace_id: string };
        checkAssignee(db, project.workspace_id, f.assigneeId);
      }
      // The explanation (the latest one) lives in the item's extras.
      if (f.explanationMd !== undefined) {
        const extra = JSON.parse(current.extra) as Record<string, unknown>;
        extra.explanationMd = f.explanationMd;
        changes.extra = JSON.stringify(extra);
      }
      const kind = (f.kind ?? current.kind) as Kind;
      if (f.kind !== undefined || f.parentKey !== undefined) {
        const parentKey = f.parentKey === undefined ? (current.parent_key ?? null) : f.parentKey;
        const parent = parentKey ? parentRow(db, principal, parentKey) : null;
        checkPlacement(db, kind, parent, current.project_id, current.id);
        if (f.kind !== undefined && f.kind !== current.kind) checkChildrenFit(db, current.id, kind);
        if (f.kind !== undefined) changes.kind = kind;
        if (f.parentKey !== undefined) changes.parent_id = parent?.id ?? null;
      }
      return updateColumns(db, current.id, changes, ctx.now());
    });
    return { status: 200, body: buildDetail(db, row), headers: { ETag: etagOf(row) } };
  },
};
