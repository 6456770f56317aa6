// One full sample of every wire type, every optional field included: `satisfies Required<T>` makes
// the type checker demand each field types.ts declares, and types-match-document.test.ts demands
// each field the document declares, so a field added on one side only fails one of the two.
import type {
  BacklogMove, BacklogMoved, ChildItem, CloseOutPrompt, Delivery, Dependencies, DependencyRef, DispatchCard,
  DispatchCardInput, DispatchEventInput, DispatchEventsAppend, DispatchEventsAppended, DispatchRun, DispatchRunClose,
  DispatchRunOpen, DispatchRunOpened, ErrorBody, Folder, FolderCreate, FolderDeleted, FolderUpdate, GitCredential,
  GitCredentials, Identity, InternalErrorBody, LinkItem, Links, Page, Plan, PlanningThread, PlanProposal,
  PlanSessionAddress, PlanStatusView, PlanSubmitted, PlanTurnInput, Project, RankedPage, Readiness, ReadyBugGroup,
  ReadyContainer, TargetRepository, WorkItemCount, WorkItemCreate, WorkItemDetail, WorkItemSummary, WorkItemUpdate,
  Workspace,
} from '../../src/contract/types.js';

const at = '2026-01-02T03:04:05.678Z';
/** The declared fields of a type with an index signature (`[extra: string]: unknown`). */
type Declared<T> = { [K in keyof T as string extends K ? never : K]: T[K] };

const dependencyRef = { key: 'APP-2', title: 'Blocker', status: 'done' } satisfies Required<DependencyRef>;
const dependencies = { blockedBy: [dependencyRef], blocks: [] } satisfies Required<Dependencies>;
const linkItem = {
  key: 'APP-3', kind: 'task', title: 'Linked', status: 'todo', statusCategory: 'todo', priority: 'high',
  assigneeId: null, estimateMinutes: 30, storyPoints: 2.5, parentKey: 'APP-1', archived: false,
} satisfies Required<LinkItem>;
const childItem = { ...linkItem, key: 'APP-4', dependencies } satisfies Required<ChildItem>;
const links = {
  blockedBy: [linkItem], blocks: [], relatesTo: [linkItem], duplicates: [], clones: [],
} satisfies Required<Links>;
const readiness = {
  ready: false, openBlockers: [linkItem], blockedByAncestorKey: 'APP-1', blockedByAncestorTitle: 'Parent',
} satisfies Required<Readiness>;
const targetRepository = {
  ref: 'acme/app', name: 'app', role: 'primary', label: null, state: 'active', primary: true,
} satisfies Required<TargetRepository>;
const delivery = {
  repo: 'acme/app', number: 7, title: 'APP-5: fix', url: 'https://example.test/pr/7', state: 'open', ci: 'failing',
  baseRef: 'main', defaultBranch: 'main',
} satisfies Required<Delivery>;
const summary = {
  key: 'APP-5', kind: 'story', type: 'code', title: 'Do it', status: 'in_progress', statusCategory: 'in_progress',
  priority: 'medium', assigneeId: 'u1', reporterId: 'u2', dueDate: '2026-02-01T00:00Z', estimateMinutes: 90,
  storyPoints: 3, createdAt: at, updatedAt: at, dependencies,
} satisfies Required<WorkItemSummary>;
const detail = {
  ...summary,
  descriptionMd: '# Why', parentKey: 'APP-1', ancestorKeys: ['APP-1'], children: [childItem], links, readiness,
  labels: [{ name: 'infra' }], components: [{ name: 'api' }], commentCount: 4, sprintId: null, targetRepo: 'acme/app',
  targetRepos: ['acme/app'], targetRepositories: [targetRepository], executor: 'coding_agent', planningSource: 'native',
  implementationSource: 'hosted', planningHarness: null, planningModel: null, implementationHarness: 'claude-code',
  implementationModel: null, archivedAt: null, deliveries: [delivery],
} satisfies Required<WorkItemDetail>;
const workspace = { id: 'w1', name: 'Acme', slug: 'acme', createdAt: at } satisfies Required<Workspace>;
const project = {
  key: 'APP', name: 'App', accessMode: 'members', accessLevel: 'private', archived: false,
} satisfies Required<Project>;
const folder = {
  id: 'f2', projectKey: 'APP', parentFolderId: 'f1', name: 'Specs', path: ['Docs', 'Specs'], position: 'a1',
  createdAt: at, updatedAt: at,
} satisfies Required<Folder>;
const readyContainer = { ...linkItem, readyLeafCount: 2, childCount: 3 } satisfies Required<ReadyContainer>;
const readyBugGroup = { container: linkItem, items: [summary] } satisfies Required<ReadyBugGroup>;
const dispatchCard = {
  workItemKey: 'APP-5', disposition: 'failed', skipReason: null, sessionBranch: 'svc/APP-5', exitCode: 1, updatedAt: at,
} satisfies Required<DispatchCard>;
const dispatchRun = {
  id: 'r1', projectId: 'p1', command: 'run_scope', origin: 'local', scopeWorkItemId: 'wi1', scopeLabel: 'APP-1',
  status: 'running', stopReason: null, agent: 'claude', model: null, startedAt: at, endedAt: null,
  lastHeartbeatAt: at, createdById: 'u1', agentInstance: null, cards: [dispatchCard], seq: 12,
  continues: { runId: 'r0' }, repair: null,
} satisfies Required<DispatchRun>;
const gitCredential = {
  repository: 'acme/app', url: 'http://127.0.0.1:1/git/acme/app.git', username: 'x-access-token', token: 'ghs_x',
  expiresAt: at,
} satisfies Required<GitCredential>;
const planProposal = {
  op: 'add', proposedFields: { title: 'New' }, patch: null, parentRef: 'APP-1', blockedByRefs: [], workItemKey: null,
} satisfies Required<Declared<PlanProposal>>;
const page = <T>(item: T): Required<Page<T>> => ({ items: [item], nextCursor: 'c1' });

/** Response resources, by component schema name. */
export const resourceSamples: Record<string, unknown> = {
  Identity: {
    user: { id: 'u1', name: 'Ada', email: 'ada@example.test' }, workspaceId: 'w1', permissions: ['project:browse'],
  } satisfies Required<Identity>,
  Workspace: workspace,
  Project: project,
  DependencyRef: dependencyRef,
  Dependencies: dependencies,
  LinkItem: linkItem,
  ChildItem: childItem,
  Links: links,
  Readiness: readiness,
  TargetRepository: targetRepository,
  Delivery: delivery,
  WorkItemSummary: summary,
  WorkItemDetail: detail,
  WorkItemCount: { count: 3 } satisfies Required<WorkItemCount>,
  ReadyBugGroup: readyBugGroup,
  ReadyContainer: readyContainer,
  Folder: folder,
  FolderDeleted: {
    deletedFolderId: 'f2', destinationFolderId: null, movedFolderIds: ['f3'], movedWorkItemIds: ['wi9'],
  } satisfies Required<FolderDeleted>,
  BacklogMoved: { movedKeys: ['APP-5'] } satisfies Required<BacklogMoved>,
  PlanningThread: {
    id: 't1', targetKeys: ['APP-1'], turnCount: 1, lastJobId: null, lastSubmittedAt: null, createdAt: at, updatedAt: at,
    turns: [{ body: 'Split it' }],
  } satisfies Required<PlanningThread>,
  PlanSubmitted: { jobId: 'j1', planId: 'pl1', statusUrl: '/api/v1/plans/pl1/status' } satisfies Required<PlanSubmitted>,
  PlanProposal: planProposal,
  Plan: {
    id: 'pl1', status: 'planned', origin: 'user', title: null, summary: 'Two stories', sourceJobId: 'j1',
    proposalCount: 1, createdAt: at, plannedAt: at, decidedAt: null, proposals: [planProposal],
  } satisfies Required<Plan>,
  PlanStatusView: {
    planId: 'pl1', status: 'generating', origin: 'cadence', jobId: 'j1', proposalCount: 0, createdAt: at,
    plannedAt: null, decidedAt: null, job: { reachable: false },
  } satisfies Required<PlanStatusView>,
  DispatchCard: dispatchCard,
  DispatchRun: dispatchRun,
  DispatchRunOpened: { run: dispatchRun, created: true } satisfies Required<DispatchRunOpened>,
  DispatchEventsAppended: {
    runId: 'r1', appended: 2, seq: 14, cards: [dispatchCard],
  } satisfies Required<DispatchEventsAppended>,
  CloseOutPrompt: {
    runId: 'r1', targetKey: 'APP-1', prompt: 'Close out APP-1', landedKeys: ['APP-5'],
  } satisfies Required<CloseOutPrompt>,
  GitCredential: gitCredential,
  GitCredentials: { credentials: [gitCredential], dispatchedBy: 'u1' } satisfies Required<GitCredentials>,
  WorkspacePage: page(workspace),
  ProjectPage: page(project),
  WorkItemSummaryPage: page(summary),
  BacklogPage: { ...page(summary), total: 1 } satisfies Required<RankedPage<WorkItemSummary>>,
  FolderPage: page(folder),
  ReadyBugGroupPage: page(readyBugGroup),
  ReadyContainerPage: page(readyContainer),
  ErrorBody: { error: 'No such thing.', code: 'NOT_FOUND' } satisfies Required<Declared<ErrorBody>>,
  InternalErrorBody: { error: 'Something went wrong.', requestId: 'req-1' } satisfies Required<InternalErrorBody>,
};

const dispatchCardInput = { workItemKey: 'APP-5', skipReason: 'human executor' } satisfies Required<DispatchCardInput>;
const dispatchEventInput = {
  workItemKey: 'APP-5', disposition: 'implemented', sessionBranch: 'svc/APP-5', exitCode: 0, body: 'log',
} satisfies Required<DispatchEventInput>;

/** Request bodies, by component schema name. */
export const requestSamples: Record<string, unknown> = {
  WorkItemCreate: {
    kind: 'subtask', title: 'T', parentKey: 'APP-5', descriptionMd: null, priority: 'low', type: null, executor: 'human',
    storyPoints: 9999.99, estimateMinutes: 0, targetRepo: null, targetRepos: [], targetRepositories: ['acme/app'],
    assigneeId: null, dueDate: '2026-03-04T05:06:07Z',
  } satisfies Required<WorkItemCreate>,
  WorkItemUpdate: {
    kind: 'task', title: 'T2', parentKey: null, descriptionMd: 'd', priority: 'highest', type: 'chore', executor: null,
    storyPoints: null, estimateMinutes: 9007199254740991, targetRepo: 'acme/app', targetRepos: ['acme/app'],
    targetRepositories: [], assigneeId: 'u1', dueDate: null, explanationMd: 'because',
  } satisfies Required<WorkItemUpdate>,
  BacklogMove: { workItemKeys: ['APP-5'] } satisfies Required<BacklogMove>,
  FolderCreate: { name: ' Specs ', parentFolderId: null } satisfies Required<FolderCreate>,
  PlanSessionAddress: { targetKeys: ['APP-1'], sessionId: 's1' } satisfies Required<PlanSessionAddress>,
  PlanTurnInput: { body: 'Split it', targetKeys: [], sessionId: 's1' } satisfies Required<PlanTurnInput>,
  DispatchCardInput: dispatchCardInput,
  DispatchRunOpen: {
    projectKey: 'APP', command: 'batch', origin: 'hosted', scopeKey: 'APP-1', scopeLabel: 'APP-1', agent: 'claude',
    model: 'm', idempotencyKey: 'k1', cards: [dispatchCardInput],
  } satisfies Required<DispatchRunOpen>,
  DispatchRunClose: { stopReason: 'halted', status: 'failed' } satisfies Required<DispatchRunClose>,
  DispatchEventInput: dispatchEventInput,
  DispatchEventsAppend: { events: [dispatchEventInput] } satisfies Required<DispatchEventsAppend>,
};

/**
 * FolderUpdate is a rename or a placement, never both, so no single valid body has every field:
 * the key check uses the union of the two, validation each one.
 */
export const folderUpdateSamples = {
  rename: { name: 'Renamed' } satisfies FolderUpdate,
  placement: { parentFolderId: null, beforeId: 'f1', afterId: null } satisfies FolderUpdate,
  allKeys: { name: 'x', parentFolderId: null, beforeId: null, afterId: null } satisfies Required<FolderUpdate>,
};
