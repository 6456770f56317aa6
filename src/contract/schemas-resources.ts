// Component schemas of the resources the service answers with, mirroring types.ts field for field
// (test/contract/types-match-document.test.ts keeps the two in step). Enums here are the known
// values: the document describes what this service emits, so an unknown value from the local
// service is drift. Clients still read responses tolerantly (DISPATCH.md §1).
import {
  ACCESS_LEVELS, ACCESS_MODES, DELIVERY_CI, DELIVERY_STATES, DISPATCH_COMMANDS, DISPOSITIONS, ERROR_CODES,
  EXECUTORS, IMPLEMENTATION_SOURCES, KINDS, OPEN_ORIGINS, PLAN_ORIGINS, PLAN_STATUSES, PLANNING_SOURCES,
  PRIORITIES, PROPOSAL_OPS, RUN_STATUSES, SCOPES, STATUS_CATEGORIES, STOP_REASONS, WORK_TYPES,
} from './types.js';
import {
  anyObject, anyObjectOrNull, arrayOf, bool, dateTime, dateTimeOrNull, enumOf, enumOrNull, int, intOrNull,
  key, keyArray, keyOrNull, numOrNull, object, ref, refOrNull, str, strArray, strOrNull,
  type JsonSchema,
} from './schemas-shared.js';

/** `accessLevel` is derived from `accessMode`; `limited` is never emitted (api-v1 §2). */
export const ACCESS_LEVEL_OF_MODE = { workspace: 'open', members: 'private', public: 'public' } as const;
/** Run origins of a run record: the open request's plus `instance`. */
export const RUN_ORIGIN_VALUES = [...OPEN_ORIGINS, 'instance'] as const;

const statusCategory = enumOf(STATUS_CATEGORIES);
const dependencyRef = object({ key, title: str, status: str }, { closed: true });

const linkItemProperties: Record<string, JsonSchema> = {
  key,
  kind: enumOf(KINDS),
  title: str,
  status: str,
  statusCategory,
  priority: enumOf(PRIORITIES),
  assigneeId: strOrNull,
  estimateMinutes: intOrNull,
  storyPoints: numOrNull,
  parentKey: keyOrNull,
  archived: bool,
};
// statusCategory is additive (docs/service.md): optional in the document, always sent locally.
const linkItemOptional = ['statusCategory'];

const summaryProperties: Record<string, JsonSchema> = {
  key,
  kind: enumOf(KINDS),
  type: enumOrNull(WORK_TYPES),
  title: str,
  status: str,
  statusCategory,
  priority: enumOf(PRIORITIES),
  assigneeId: strOrNull,
  reporterId: str,
  dueDate: dateTimeOrNull,
  estimateMinutes: intOrNull,
  storyPoints: numOrNull,
  createdAt: dateTime,
  updatedAt: dateTime,
  dependencies: ref('Dependencies'),
};

const detailProperties: Record<string, JsonSchema> = {
  ...summaryProperties,
  descriptionMd: strOrNull,
  parentKey: keyOrNull,
  ancestorKeys: keyArray,
  children: arrayOf(ref('ChildItem')),
  links: ref('Links'),
  readiness: ref('Readiness'),
  labels: arrayOf(object({ name: str }, { closed: true })),
  components: arrayOf(object({ name: str }, { closed: true })),
  commentCount: { type: 'integer', minimum: 0 },
  sprintId: strOrNull,
  targetRepo: strOrNull,
  targetRepos: strArray,
  targetRepositories: arrayOf(ref('TargetRepository')),
  executor: enumOrNull(EXECUTORS),
  planningSource: enumOrNull(PLANNING_SOURCES),
  implementationSource: enumOrNull(IMPLEMENTATION_SOURCES),
  planningHarness: strOrNull,
  planningModel: strOrNull,
  implementationHarness: strOrNull,
  implementationModel: strOrNull,
  archivedAt: dateTimeOrNull,
  deliveries: arrayOf(ref('Delivery')),
};

const page = (row: JsonSchema, description: string): JsonSchema =>
  object({ items: arrayOf(row), nextCursor: strOrNull }, { closed: true, description });

const dispatchCard = object(
  {
    workItemKey: key,
    disposition: enumOf(DISPOSITIONS),
    skipReason: strOrNull,
    sessionBranch: strOrNull,
    exitCode: intOrNull,
    updatedAt: dateTime,
  },
  { closed: true, description: 'A leg of a run as the local service records it (the contract leaves it open).' },
);

/** Every status's error codes, from ERROR_CODES (contract §7 plus DISPATCH.md §7). */
export function errorCodesFor(status: number): string[] {
  return Object.entries(ERROR_CODES)
    .filter(([, codeStatus]) => codeStatus === status)
    .map(([code]) => code);
}

export const resourceSchemas: Record<string, JsonSchema> = {
  Identity: object(
    {
      user: object({ id: str, name: str, email: str }, { closed: true }),
      workspaceId: str,
      permissions: arrayOf(enumOf(SCOPES)),
    },
    { closed: true },
  ),
  Workspace: object({ id: str, name: str, slug: str, createdAt: dateTime }, { closed: true }),
  Project: {
    ...object(
      {
        key: str,
        name: str,
        accessMode: enumOf(ACCESS_MODES),
        accessLevel: {
          ...enumOf(ACCESS_LEVELS.filter((level) => level !== 'limited')),
          deprecated: true,
          description: 'Deprecated: derived from accessMode. `limited` is never emitted.',
        },
        archived: bool,
      },
      { closed: true },
    ),
    // Pins the derivation so a server that stores the two separately cannot let them disagree.
    allOf: Object.entries(ACCESS_LEVEL_OF_MODE).map(([mode, level]) => ({
      if: { properties: { accessMode: { const: mode } }, required: ['accessMode'] },
      then: { properties: { accessLevel: { const: level } } },
    })),
  },
  DependencyRef: dependencyRef,
  Dependencies: object({ blockedBy: arrayOf(ref('DependencyRef')), blocks: arrayOf(ref('DependencyRef')) }, {
    closed: true,
  }),
  LinkItem: object(linkItemProperties, { optional: linkItemOptional, closed: true }),
  ChildItem: object(
    { ...linkItemProperties, dependencies: ref('Dependencies') },
    { optional: linkItemOptional, closed: true },
  ),
  Links: object(
    Object.fromEntries(
      ['blockedBy', 'blocks', 'relatesTo', 'duplicates', 'clones'].map((group) => [group, arrayOf(ref('LinkItem'))]),
    ),
    { closed: true },
  ),
  Readiness: object(
    {
      ready: bool,
      openBlockers: arrayOf(ref('LinkItem')),
      blockedByAncestorKey: keyOrNull,
      blockedByAncestorTitle: strOrNull,
    },
    { closed: true },
  ),
  TargetRepository: object(
    { ref: str, name: str, role: str, label: strOrNull, state: str, primary: bool },
    { closed: true },
  ),
  Delivery: object(
    {
      repo: str,
      number: int,
      title: str,
      url: str,
      state: enumOf(DELIVERY_STATES),
      ci: enumOrNull(DELIVERY_CI),
      baseRef: strOrNull,
      defaultBranch: str,
    },
    { closed: true },
  ),
  WorkItemSummary: object(summaryProperties, { optional: linkItemOptional, closed: true }),
  WorkItemDetail: object(detailProperties, { optional: linkItemOptional, closed: true }),
  WorkItemCount: object(
    { count: { type: 'integer', minimum: 0 } },
    { closed: true, description: 'The contract does not show the field; the local service answers `{count}`.' },
  ),
  ReadyBugGroup: object(
    { container: refOrNull('LinkItem'), items: arrayOf(ref('WorkItemSummary')) },
    { closed: true, description: 'A ready bug alone has `container: null`; subtasks of a bug group under it.' },
  ),
  ReadyContainer: object(
    {
      ...linkItemProperties,
      readyLeafCount: { type: 'integer', minimum: 0 },
      childCount: { type: 'integer', minimum: 0 },
    },
    { optional: linkItemOptional, closed: true },
  ),
  Folder: object(
    {
      id: str,
      projectKey: str,
      parentFolderId: strOrNull,
      name: str,
      path: { ...strArray, description: 'Folder names from the root down.' },
      position: str,
      createdAt: dateTime,
      updatedAt: dateTime,
    },
    { closed: true },
  ),
  FolderDeleted: object(
    { deletedFolderId: str, destinationFolderId: strOrNull, movedFolderIds: strArray, movedWorkItemIds: strArray },
    { closed: true },
  ),
  BacklogMoved: object({ movedKeys: keyArray }, { closed: true }),
  /** Design rows are left open by the contract. */
  Design: { ...anyObject, description: 'A design row; its shape is not shown by the contract.' },
  PlanningThread: object(
    {
      id: str,
      targetKeys: keyArray,
      turnCount: { type: 'integer', minimum: 0 },
      lastJobId: strOrNull,
      lastSubmittedAt: dateTimeOrNull,
      createdAt: dateTime,
      updatedAt: dateTime,
      turns: arrayOf(anyObject),
    },
    { closed: true },
  ),
  PlanSubmitted: object({ jobId: str, planId: str, statusUrl: str }, { closed: true }),
  // Proposals carry more than the named fields (their shape is open): not closed.
  PlanProposal: object(
    {
      op: enumOf(PROPOSAL_OPS),
      proposedFields: anyObjectOrNull,
      patch: anyObjectOrNull,
      parentRef: strOrNull,
      blockedByRefs: strArray,
      workItemKey: keyOrNull,
    },
    { optional: ['proposedFields', 'patch'] },
  ),
  Plan: object(
    {
      id: str,
      status: enumOf(PLAN_STATUSES),
      origin: enumOf(PLAN_ORIGINS),
      title: strOrNull,
      summary: strOrNull,
      sourceJobId: strOrNull,
      proposalCount: { type: 'integer', minimum: 0 },
      createdAt: dateTime,
      plannedAt: dateTimeOrNull,
      decidedAt: dateTimeOrNull,
      proposals: arrayOf(ref('PlanProposal')),
    },
    { closed: true },
  ),
  PlanStatusView: object(
    {
      planId: str,
      status: enumOf(PLAN_STATUSES),
      origin: enumOf(PLAN_ORIGINS),
      jobId: strOrNull,
      proposalCount: { type: 'integer', minimum: 0 },
      createdAt: dateTime,
      plannedAt: dateTimeOrNull,
      decidedAt: dateTimeOrNull,
      job: {
        anyOf: [object({ reachable: bool }), { type: 'null' }],
        description: '`reachable: false`: the planning dependency could not be asked; the job may be alive.',
      },
    },
    { closed: true },
  ),
  DispatchCard: dispatchCard,
  DispatchRun: object(
    {
      id: str,
      projectId: str,
      command: enumOf(DISPATCH_COMMANDS),
      origin: enumOf(RUN_ORIGIN_VALUES),
      scopeWorkItemId: strOrNull,
      scopeLabel: strOrNull,
      status: enumOf(RUN_STATUSES),
      stopReason: enumOrNull(STOP_REASONS),
      agent: strOrNull,
      model: strOrNull,
      startedAt: dateTime,
      endedAt: dateTimeOrNull,
      lastHeartbeatAt: dateTimeOrNull,
      createdById: strOrNull,
      agentInstance: anyObjectOrNull,
      cards: arrayOf(ref('DispatchCard')),
      seq: { type: 'integer', minimum: 0, description: 'The seq of the last stored event; 0 before any.' },
      continues: anyObjectOrNull,
      repair: anyObjectOrNull,
    },
    { optional: ['continues', 'repair'], closed: true },
  ),
  DispatchRunOpened: object({ run: ref('DispatchRun'), created: bool }, { closed: true }),
  DispatchEventsAppended: object(
    {
      runId: str,
      appended: { type: 'integer', minimum: 0 },
      seq: { type: 'integer', minimum: 0 },
      cards: arrayOf(ref('DispatchCard')),
    },
    { closed: true },
  ),
  CloseOutPrompt: object({ runId: str, targetKey: key, prompt: str, landedKeys: keyArray }, { closed: true }),
  GitCredential: object(
    { repository: str, url: str, username: str, token: str, expiresAt: dateTime },
    { closed: true, description: 'The contract leaves the entry open; this is the local service shape.' },
  ),
  GitCredentials: object(
    { credentials: arrayOf(ref('GitCredential')), dispatchedBy: strOrNull },
    { closed: true },
  ),
  WorkspacePage: page(ref('Workspace'), 'A cursor page of workspace rows.'),
  ProjectPage: page(ref('Project'), 'A cursor page of projects, by key ascending.'),
  WorkItemSummaryPage: page(ref('WorkItemSummary'), 'A cursor page of work item summaries by (createdAt, id).'),
  BacklogPage: object(
    { items: arrayOf(ref('WorkItemSummary')), nextCursor: strOrNull, total: { type: 'integer', minimum: 0 } },
    { closed: true, description: 'A ranked page: backlog rank order, with the total across pages.' },
  ),
  DesignPage: page(ref('Design'), 'A cursor page of approved designs, newest first.'),
  FolderPage: page(ref('Folder'), 'One level of child folders, in tree order.'),
  ReadyBugGroupPage: page(ref('ReadyBugGroup'), 'A cursor page of ready bug groups.'),
  ReadyContainerPage: page(ref('ReadyContainer'), 'A cursor page of runnable containers; items[0] runs next.'),
  // Error bodies may grow fields (contract §7 shows only error and code): not closed.
  ErrorBody: object(
    { error: { type: 'string', minLength: 1 }, code: enumOf(Object.keys(ERROR_CODES)) },
    { description: 'Clients match on `code`, never on `error`.' },
  ),
  InternalErrorBody: {
    ...object(
      { error: { type: 'string', minLength: 1 }, requestId: str },
      { closed: true, description: 'The 500 body: no code, no stack, no driver text.' },
    ),
    // Said outright for every reader, not only the local check: a 500 never carries these.
    allOf: [
      {
        not: { anyOf: [{ required: ['code'] }, { required: ['stack'] }] },
        'x-error': 'a 500 body carries no code and no stack',
      },
    ],
  },
};
