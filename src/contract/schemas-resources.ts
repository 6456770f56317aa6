// Component schemas of the other resources the service answers with (work items and ready lanes
// are in ./schemas-work-items.ts, dispatch runs in ./schemas-dispatch.ts), and the list of every
// response schema in the document's order. Enum types stay open, as there.
import * as Type from 'typebox/type';
import type { TSchema } from 'typebox';
import { ACCESS_LEVELS, ACCESS_MODES, ERROR_CODES, PLAN_ORIGINS, PLAN_STATUSES, PROPOSAL_OPS, SCOPES, type ErrorCode } from './types.js';
import {
  anyObject,
  anyObjectOrNull,
  bool,
  closed,
  count,
  dateTime,
  dateTimeOrNull,
  keyArray,
  keyOrNull,
  nonEmpty,
  openEnumOf,
  openObject,
  ref,
  str,
  strArray,
  strOrNull,
} from './schemas-shared.js';
import {
  ChildItem,
  Delivery,
  Dependencies,
  DependencyRef,
  LinkItem,
  Links,
  Readiness,
  ReadyBugGroup,
  ReadyContainer,
  TargetRepository,
  WorkItemCount,
  WorkItemDetail,
  WorkItemSummary,
} from './schemas-work-items.js';
import { CloseOutPrompt, DispatchCard, DispatchEventsAppended, DispatchRun, DispatchRunOpened, GitCredential, GitCredentials } from './schemas-dispatch.js';

/** `accessLevel` is derived from `accessMode`; `limited` is never emitted (the contract's fields). */
export const ACCESS_LEVEL_OF_MODE = { workspace: 'open', members: 'private', public: 'public' } as const;

/** Every status's error codes, from ERROR_CODES (the contract's errors, plus docs/service.md). */
export function errorCodesFor(status: number): string[] {
  return Object.entries(ERROR_CODES)
    .filter(([, codeStatus]) => codeStatus === status)
    .map(([code]) => code);
}

export const Identity = Type.Object(
  {
    user: Type.Object({ id: str, name: str, email: str }, closed()),
    workspaceId: str,
    permissions: Type.Array(openEnumOf(SCOPES)),
  },
  closed(),
);

export const Workspace = Type.Object({ id: str, name: str, slug: str, createdAt: dateTime }, closed());

export const Project = Type.Object(
  {
    key: str,
    name: str,
    accessMode: openEnumOf(ACCESS_MODES),
    accessLevel: openEnumOf(
      ACCESS_LEVELS.filter((level) => level !== 'limited'),
      {
        deprecated: true,
        description: 'Deprecated: derived from accessMode. `limited` is never emitted.',
      },
    ),
    archived: bool,
  },
  {
    ...closed(),
    // Pins the derivation so a server that stores the two separately cannot let them disagree.
    allOf: Object.entries(ACCESS_LEVEL_OF_MODE).map(([mode, level]) => ({
      if: { properties: { accessMode: { const: mode } }, required: ['accessMode'] },
      then: { properties: { accessLevel: { const: level } } },
    })),
  },
);

export const Folder = Type.Object(
  {
    id: str,
    projectKey: str,
    parentFolderId: strOrNull,
    name: str,
    path: Type.Array(str, { description: 'Folder names from the root down.' }),
    position: str,
    createdAt: dateTime,
    updatedAt: dateTime,
  },
  closed(),
);

export const FolderDeleted = Type.Object(
  { deletedFolderId: str, destinationFolderId: strOrNull, movedFolderIds: strArray, movedWorkItemIds: strArray },
  closed(),
);

export const BacklogMoved = Type.Object({ movedKeys: keyArray }, closed());

/** Design rows are left open by the contract. */
export const Design = Type.Unsafe<Record<string, unknown>>({
  type: 'object',
  description: 'A design row; its shape is not shown by the contract.',
});

export const PlanningThread = Type.Object(
  {
    id: str,
    targetKeys: keyArray,
    turnCount: count,
    lastJobId: strOrNull,
    lastSubmittedAt: dateTimeOrNull,
    createdAt: dateTime,
    updatedAt: dateTime,
    turns: Type.Array(anyObject),
  },
  closed(),
);

export const PlanSubmitted = Type.Object({ jobId: str, planId: str, statusUrl: str }, closed());

// Proposals carry more than the named fields (their shape is open): not closed.
export const PlanProposal = openObject({
  op: openEnumOf(PROPOSAL_OPS),
  proposedFields: Type.Optional(anyObjectOrNull),
  patch: Type.Optional(anyObjectOrNull),
  parentRef: strOrNull,
  blockedByRefs: strArray,
  workItemKey: keyOrNull,
});

export const Plan = Type.Object(
  {
    id: str,
    status: openEnumOf(PLAN_STATUSES),
    origin: openEnumOf(PLAN_ORIGINS),
    title: strOrNull,
    summary: strOrNull,
    sourceJobId: strOrNull,
    proposalCount: count,
    createdAt: dateTime,
    plannedAt: dateTimeOrNull,
    decidedAt: dateTimeOrNull,
    proposals: Type.Array(ref({ PlanProposal })),
  },
  closed(),
);

export const PlanStatusView = Type.Object(
  {
    planId: str,
    status: openEnumOf(PLAN_STATUSES),
    origin: openEnumOf(PLAN_ORIGINS),
    jobId: strOrNull,
    proposalCount: count,
    createdAt: dateTime,
    plannedAt: dateTimeOrNull,
    decidedAt: dateTimeOrNull,
    job: Type.Union([openObject({ reachable: bool }), Type.Null()], {
      description: '`reachable: false`: the planning dependency could not be asked; the job may be alive.',
    }),
  },
  closed(),
);

const page = <T extends TSchema>(row: T, description: string) => Type.Object({ items: Type.Array(row), nextCursor: strOrNull }, closed(description));

/** A ranked page (backlog) also reports a total. */
export const BacklogPage = Type.Object(
  { items: Type.Array(ref({ WorkItemSummary })), nextCursor: strOrNull, total: count },
  closed('A ranked page: backlog rank order, with the total across pages.'),
);

/**
 * Error body of every non-500 error. Clients match on `code`, never on `error`. It may grow fields
 * (the contract's errors show only error and code): not closed.
 */
export const ErrorBody = openObject(
  { error: nonEmpty, code: openEnumOf(Object.keys(ERROR_CODES) as ErrorCode[]) },
  { description: 'Clients match on `code`, never on `error`.' },
);

/** The 500 body: no code, no stack, no driver text. */
export const InternalErrorBody = Type.Object(
  { error: nonEmpty, requestId: str },
  {
    ...closed('The 500 body: no code, no stack, no driver text.'),
    // Said outright for every reader, not only the local check: a 500 never carries these.
    allOf: [
      {
        not: { anyOf: [{ required: ['code'] }, { required: ['stack'] }] },
        'x-error': 'a 500 body carries no code and no stack',
      },
    ],
  },
);

/** The response schemas, in the document's order. */
export const resourceSchemas: Record<string, TSchema> = {
  Identity,
  Workspace,
  Project,
  DependencyRef,
  Dependencies,
  LinkItem,
  ChildItem,
  Links,
  Readiness,
  TargetRepository,
  Delivery,
  WorkItemSummary,
  WorkItemDetail,
  WorkItemCount,
  ReadyBugGroup,
  ReadyContainer,
  Folder,
  FolderDeleted,
  BacklogMoved,
  Design,
  PlanningThread,
  PlanSubmitted,
  PlanProposal,
  Plan,
  PlanStatusView,
  DispatchCard,
  DispatchRun,
  DispatchRunOpened,
  DispatchEventsAppended,
  CloseOutPrompt,
  GitCredential,
  GitCredentials,
  WorkspacePage: page(ref({ Workspace }), 'A cursor page of workspace rows.'),
  ProjectPage: page(ref({ Project }), 'A cursor page of projects, by key ascending.'),
  WorkItemSummaryPage: page(ref({ WorkItemSummary }), 'A cursor page of work item summaries by (createdAt, id).'),
  BacklogPage,
  DesignPage: page(ref({ Design }), 'A cursor page of approved designs, newest first.'),
  FolderPage: page(ref({ Folder }), 'One level of child folders, in tree order.'),
  ReadyBugGroupPage: page(ref({ ReadyBugGroup }), 'A cursor page of ready bug groups.'),
  ReadyContainerPage: page(ref({ ReadyContainer }), 'A cursor page of runnable containers; items[0] runs next.'),
  ErrorBody,
  InternalErrorBody,
};
