// Full bodies for the validation tests, every optional field included: `satisfies Required<T>`
// makes the type checker demand each field of the wire type (derived from its schema), so "every
// field" in those tests stays every field when the contract grows one.
import type {
  ChildItem,
  Delivery,
  Dependencies,
  DependencyRef,
  DispatchCard,
  DispatchCardInput,
  DispatchRun,
  DispatchRunOpen,
  DispatchRunOpened,
  FolderUpdate,
  LinkItem,
  Links,
  Project,
  RankedPage,
  Readiness,
  TargetRepository,
  WorkItemCreate,
  WorkItemDetail,
  WorkItemSummary,
  WorkItemUpdate,
} from '../../src/contract/types.js';

const at = '2026-01-02T03:04:05.678Z';
const dependencyRef = { key: 'APP-2', title: 'Blocker', status: 'done' } satisfies Required<DependencyRef>;
const dependencies = { blockedBy: [dependencyRef], blocks: [] } satisfies Required<Dependencies>;
const linkItem = {
  key: 'APP-3',
  kind: 'task',
  title: 'Linked',
  status: 'todo',
  statusCategory: 'todo',
  priority: 'high',
  assigneeId: null,
  estimateMinutes: 30,
  storyPoints: 2.5,
  parentKey: 'APP-1',
  archived: false,
} satisfies Required<LinkItem>;
const childItem = { ...linkItem, key: 'APP-4', dependencies } satisfies Required<ChildItem>;
const links = {
  blockedBy: [linkItem],
  blocks: [],
  relatesTo: [linkItem],
  duplicates: [],
  clones: [],
} satisfies Required<Links>;
const readiness = {
  ready: false,
  openBlockers: [linkItem],
  blockedByAncestorKey: 'APP-1',
  blockedByAncestorTitle: 'Parent',
} satisfies Required<Readiness>;
const targetRepository = {
  ref: 'acme/app',
  name: 'app',
  role: 'primary',
  label: null,
  state: 'active',
  primary: true,
} satisfies Required<TargetRepository>;
const delivery = {
  repo: 'acme/app',
  number: 7,
  title: 'APP-5: fix',
  url: 'https://example.test/pr/7',
  state: 'open',
  ci: 'failing',
  baseRef: 'main',
  defaultBranch: 'main',
} satisfies Required<Delivery>;
const summary = {
  key: 'APP-5',
  kind: 'story',
  type: 'code',
  title: 'Do it',
  status: 'in_progress',
  statusCategory: 'in_progress',
  priority: 'medium',
  assigneeId: 'u1',
  reporterId: 'u2',
  dueDate: '2026-02-01T00:00Z',
  estimateMinutes: 90,
  storyPoints: 3,
  createdAt: at,
  updatedAt: at,
  dependencies,
} satisfies Required<WorkItemSummary>;
const detail = {
  ...summary,
  descriptionMd: '# Why',
  parentKey: 'APP-1',
  ancestorKeys: ['APP-1'],
  children: [childItem],
  links,
  readiness,
  labels: [{ name: 'infra' }],
  components: [{ name: 'api' }],
  commentCount: 4,
  sprintId: null,
  targetRepo: 'acme/app',
  targetRepos: ['acme/app'],
  targetRepositories: [targetRepository],
  executor: 'coding_agent',
  planningSource: 'native',
  implementationSource: 'hosted',
  planningHarness: null,
  planningModel: null,
  implementationHarness: 'claude-code',
  implementationModel: null,
  archivedAt: null,
  deliveries: [delivery],
} satisfies Required<WorkItemDetail>;
const project = {
  key: 'APP',
  name: 'App',
  accessMode: 'members',
  accessLevel: 'private',
  archived: false,
} satisfies Required<Project>;
const dispatchCard = {
  workItemKey: 'APP-5',
  disposition: 'failed',
  skipReason: null,
  sessionBranch: 'svc/APP-5',
  exitCode: 1,
  updatedAt: at,
} satisfies Required<DispatchCard>;
const dispatchRun = {
  id: 'r1',
  projectId: 'p1',
  command: 'run_scope',
  origin: 'local',
  scopeWorkItemId: 'wi1',
  scopeLabel: 'APP-1',
  status: 'running',
  stopReason: null,
  agent: 'claude',
  model: null,
  startedAt: at,
  endedAt: null,
  lastHeartbeatAt: at,
  createdById: 'u1',
  agentInstance: null,
  cards: [dispatchCard],
  seq: 12,
  continues: { runId: 'r0' },
  repair: null,
} satisfies Required<DispatchRun>;

/** Response resources, by component schema name. */
export const resourceSamples = {
  Project: project,
  WorkItemDetail: detail,
  DispatchRun: dispatchRun,
  DispatchRunOpened: { run: dispatchRun, created: true } satisfies Required<DispatchRunOpened>,
  BacklogPage: { items: [summary], nextCursor: 'c1', total: 1 } satisfies Required<RankedPage<WorkItemSummary>>,
};

const dispatchCardInput = { workItemKey: 'APP-5', skipReason: 'human executor' } satisfies Required<DispatchCardInput>;

/** Request bodies, by component schema name. */
export const requestSamples = {
  WorkItemCreate: {
    kind: 'subtask',
    title: 'T',
    parentKey: 'APP-5',
    descriptionMd: null,
    priority: 'low',
    type: null,
    executor: 'human',
    storyPoints: 9999.99,
    estimateMinutes: 0,
    targetRepo: null,
    targetRepos: [],
    targetRepositories: ['acme/app'],
    assigneeId: null,
    dueDate: '2026-03-04T05:06:07Z',
  } satisfies Required<WorkItemCreate>,
  WorkItemUpdate: {
    kind: 'task',
    title: 'T2',
    parentKey: null,
    descriptionMd: 'd',
    priority: 'highest',
    type: 'chore',
    executor: null,
    storyPoints: null,
    estimateMinutes: 9007199254740991,
    targetRepo: 'acme/app',
    targetRepos: ['acme/app'],
    targetRepositories: [],
    assigneeId: 'u1',
    dueDate: null,
    explanationMd: 'because',
  } satisfies Required<WorkItemUpdate>,
  DispatchRunOpen: {
    projectKey: 'APP',
    command: 'batch',
    origin: 'hosted',
    scopeKey: 'APP-1',
    scopeLabel: 'APP-1',
    agent: 'claude',
    model: 'm',
    idempotencyKey: 'k1',
    cards: [dispatchCardInput],
  } satisfies Required<DispatchRunOpen>,
};

/** FolderUpdate is a rename or a placement, never both, so no single valid body has every field. */
export const folderUpdateSamples = {
  rename: { name: 'Renamed' } satisfies FolderUpdate,
  placement: { parentFolderId: null, beforeId: 'f1', afterId: null } satisfies FolderUpdate,
};
