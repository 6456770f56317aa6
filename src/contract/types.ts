// The wire types of api-v1, shared by the client (src/api) and the local service (src/server).
// test/contract/types-match-document.test.ts checks them against the OpenAPI document in
// ./openapi.ts, and every response of the local service is validated against that document.
// Open enums are `Known | (string & {})`: the contract is additive, so a client must carry an
// unknown value through instead of crashing on it.

/** An enum the contract may grow: known values autocomplete, unknown strings still type-check. */
export type Open<T extends string> = T | (string & {});

export const KINDS = ['epic', 'story', 'task', 'subtask', 'bug'] as const;
export type Kind = (typeof KINDS)[number];

export const PRIORITIES = ['lowest', 'low', 'medium', 'high', 'highest'] as const;
export type Priority = (typeof PRIORITIES)[number];

export const WORK_TYPES = [
  'code', 'design', 'test', 'content', 'copy', 'translate', 'research', 'review',
  'verification', 'decision', 'deploy', 'manual', 'legal', 'chore',
] as const;
export type WorkType = (typeof WORK_TYPES)[number];

export const EXECUTORS = ['coding_agent', 'human'] as const;
export type Executor = (typeof EXECUTORS)[number];

export const PLANNING_SOURCES = ['native', 'mcp', 'manual', 'api'] as const;
export type PlanningSource = (typeof PLANNING_SOURCES)[number];
export const IMPLEMENTATION_SOURCES = ['hosted', 'byok', 'manual'] as const;
export type ImplementationSource = (typeof IMPLEMENTATION_SOURCES)[number];
export const DELIVERY_STATES = ['open', 'merged', 'closed'] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];
export const DELIVERY_CI = ['passing', 'failing', 'running'] as const;
export type DeliveryCi = (typeof DELIVERY_CI)[number];

export const DISPATCH_COMMANDS = ['next', 'run', 'run_scope', 'batch', 'auto', 'fix', 'continue', 'review'] as const;
export type DispatchCommand = (typeof DISPATCH_COMMANDS)[number];

export const STOP_REASONS = [
  'drained', 'completed', 'max', 'halted', 'interrupted', 'replanned', 'gated', 'abandoned',
] as const;
export type StopReason = (typeof STOP_REASONS)[number];

export const RUN_STATUSES = ['running', 'succeeded', 'failed', 'cancelled', 'timed_out'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
/** The statuses a close may set explicitly. */
export const CLOSE_STATUSES = ['succeeded', 'failed', 'cancelled', 'timed_out'] as const;
export type CloseStatus = (typeof CLOSE_STATUSES)[number];

export const OPEN_ORIGINS = ['local', 'hosted'] as const;
export type OpenOrigin = (typeof OPEN_ORIGINS)[number];
export const RUN_ORIGINS = ['local', 'hosted', 'instance'] as const;
export type RunOrigin = (typeof RUN_ORIGINS)[number];

/** Leg dispositions of the local service (DISPATCH.md §7); the contract shows only some of them. */
export const DISPOSITIONS = ['queued', 'running', 'implemented', 'failed', 'skipped', 'not_reached'] as const;
export type Disposition = (typeof DISPOSITIONS)[number];

export const PLAN_STATUSES = ['generating', 'planned', 'stale', 'approved', 'declined'] as const;
export type PlanStatus = (typeof PLAN_STATUSES)[number];
export const PLAN_ORIGINS = ['user', 'cadence'] as const;
export type PlanOrigin = (typeof PLAN_ORIGINS)[number];
export const ACCESS_MODES = ['workspace', 'members', 'public'] as const;
export type AccessMode = (typeof ACCESS_MODES)[number];
export const ACCESS_LEVELS = ['open', 'limited', 'private', 'public'] as const;
export type AccessLevel = (typeof ACCESS_LEVELS)[number];
export const PROPOSAL_OPS = ['add', 'modify', 'remove'] as const;
export type ProposalOp = (typeof PROPOSAL_OPS)[number];

export const SCOPES = ['project:browse', 'work_item:edit', 'sprint:manage', 'ai:plan'] as const;
export type Scope = (typeof SCOPES)[number];

/** Status categories: an additive field the local service sends; `done` drives backlog and readiness. */
export const STATUS_CATEGORIES = ['todo', 'in_progress', 'done'] as const;
export type StatusCategory = (typeof STATUS_CATEGORIES)[number];

export const KEY_PATTERN = /^[A-Z][A-Z0-9]*-[0-9]+$/;
export const API_VERSION = '1.0.0';
export const PAT_PREFIX = 'svc_pat_';
export const RUN_TOKEN_PREFIX = 'svc_run_';
export const EVENT_BODY_MAX_BYTES = 16_384;
export const EVENTS_PER_APPEND = 200;
export const PAGE_DEFAULT = 50;
export const PAGE_MAX = 100;

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** A ranked page (backlog) also reports a total. */
export interface RankedPage<T> extends Page<T> {
  total: number;
}

export interface Identity {
  user: { id: string; name: string; email: string };
  workspaceId: string;
  permissions: Open<Scope>[];
}

export interface Workspace {
  id: string;
  name: string;
  slug: string;
  createdAt: string;
}

export interface Project {
  key: string;
  name: string;
  accessMode: Open<AccessMode>;
  accessLevel: Open<AccessLevel>;
  archived: boolean;
}

export interface DependencyRef {
  key: string;
  title: string;
  status: string;
}

export interface Dependencies {
  blockedBy: DependencyRef[];
  blocks: DependencyRef[];
}

export interface WorkItemSummary {
  key: string;
  kind: Open<Kind>;
  type: Open<WorkType> | null;
  title: string;
  status: string;
  /** Additive: sent by the local service. */
  statusCategory?: Open<StatusCategory>;
  priority: Open<Priority>;
  assigneeId: string | null;
  reporterId: string;
  dueDate: string | null;
  estimateMinutes: number | null;
  storyPoints: number | null;
  createdAt: string;
  updatedAt: string;
  dependencies: Dependencies;
}

export interface LinkItem {
  key: string;
  kind: Open<Kind>;
  title: string;
  status: string;
  statusCategory?: Open<StatusCategory>;
  priority: Open<Priority>;
  assigneeId: string | null;
  estimateMinutes: number | null;
  storyPoints: number | null;
  parentKey: string | null;
  archived: boolean;
}

export interface ChildItem extends LinkItem {
  dependencies: Dependencies;
}

export interface Links {
  blockedBy: LinkItem[];
  blocks: LinkItem[];
  relatesTo: LinkItem[];
  duplicates: LinkItem[];
  clones: LinkItem[];
}

export interface Readiness {
  ready: boolean;
  openBlockers: LinkItem[];
  blockedByAncestorKey: string | null;
  blockedByAncestorTitle: string | null;
}

export interface TargetRepository {
  ref: string;
  name: string;
  role: string;
  label: string | null;
  state: string;
  primary: boolean;
}

export interface Delivery {
  repo: string;
  number: number;
  title: string;
  url: string;
  state: Open<DeliveryState>;
  ci: Open<DeliveryCi> | null;
  baseRef: string | null;
  defaultBranch: string;
}

export interface WorkItemDetail extends WorkItemSummary {
  descriptionMd: string | null;
  parentKey: string | null;
  ancestorKeys: string[];
  children: ChildItem[];
  links: Links;
  readiness: Readiness;
  labels: { name: string }[];
  components: { name: string }[];
  commentCount: number;
  sprintId: string | null;
  targetRepo: string | null;
  targetRepos: string[];
  targetRepositories: TargetRepository[];
  executor: Open<Executor> | null;
  planningSource: Open<PlanningSource> | null;
  implementationSource: Open<ImplementationSource> | null;
  planningHarness: string | null;
  planningModel: string | null;
  implementationHarness: string | null;
  implementationModel: string | null;
  archivedAt: string | null;
  deliveries: Delivery[];
}

export interface WorkItemCreate {
  kind: Kind;
  title: string;
  parentKey?: string | null;
  descriptionMd?: string | null;
  priority?: Priority;
  type?: WorkType | null;
  executor?: Executor | null;
  storyPoints?: number | null;
  estimateMinutes?: number | null;
  targetRepo?: string | null;
  targetRepos?: string[];
  targetRepositories?: string[];
  assigneeId?: string | null;
  dueDate?: string | null;
}

export type WorkItemUpdate = Partial<WorkItemCreate> & { explanationMd?: string | null };

/** The count response's field is not shown by the contract; the local service answers `{count}`. */
export interface WorkItemCount {
  count: number;
}

/** A row of ready/bugs: one group. A ready bug alone has `container: null`. */
export interface ReadyBugGroup {
  container: LinkItem | null;
  items: WorkItemSummary[];
}

/** A row of ready/containers. */
export interface ReadyContainer extends LinkItem {
  readyLeafCount: number;
  childCount: number;
}

export interface ReadyLaneFilters {
  kind?: string[];
  priority?: string[];
  assigneeId?: string;
  ancestor?: string[];
  sprintId?: string;
  allowSoftBlock?: string;
}

/** A card of a run as the local service records it (the contract leaves the shape open). */
export interface DispatchCard {
  workItemKey: string;
  disposition: Open<Disposition>;
  skipReason: string | null;
  sessionBranch: string | null;
  exitCode: number | null;
  updatedAt: string;
}

/** A card as the client proposes it in the open request. */
export interface DispatchCardInput {
  workItemKey: string;
  /** Present when the client already decided to skip the card; the leg starts `skipped`. */
  skipReason?: string;
}

export interface DispatchRun {
  id: string;
  projectId: string;
  command: Open<DispatchCommand>;
  origin: Open<RunOrigin>;
  scopeWorkItemId: string | null;
  scopeLabel: string | null;
  status: Open<RunStatus>;
  stopReason: Open<StopReason> | null;
  agent: string | null;
  model: string | null;
  startedAt: string;
  endedAt: string | null;
  lastHeartbeatAt: string | null;
  createdById: string | null;
  agentInstance: Record<string, unknown> | null;
  cards: DispatchCard[];
  seq: number;
  continues?: Record<string, unknown> | null;
  repair?: Record<string, unknown> | null;
}

export interface DispatchRunOpen {
  projectKey: string;
  command: DispatchCommand;
  origin?: OpenOrigin;
  scopeKey?: string;
  scopeLabel?: string;
  agent?: string;
  model?: string;
  idempotencyKey?: string;
  cards?: DispatchCardInput[];
}

export interface DispatchRunOpened {
  run: DispatchRun;
  created: boolean;
}

export interface DispatchRunClose {
  stopReason: StopReason;
  status?: CloseStatus;
}

/** An event as appended: only the fields the contract names. */
export interface DispatchEventInput {
  workItemKey?: string;
  disposition?: Disposition;
  sessionBranch?: string;
  exitCode?: number;
  body?: string;
}

export interface DispatchEventsAppend {
  events: DispatchEventInput[];
}

export interface DispatchEventsAppended {
  runId: string;
  appended: number;
  seq: number;
  cards: DispatchCard[];
}

export interface CloseOutPrompt {
  runId: string;
  targetKey: string;
  prompt: string;
  landedKeys: string[];
}

/** A git credential entry of op 30 (inner shape left open by the contract). */
export interface GitCredential {
  /** The repository, as `owner/name`. */
  repository: string;
  /** The smart-HTTP address to clone and push. */
  url: string;
  username: string;
  token: string;
  expiresAt: string;
}

export interface GitCredentials {
  credentials: GitCredential[];
  dispatchedBy: string | null;
}

export interface Folder {
  id: string;
  projectKey: string;
  parentFolderId: string | null;
  name: string;
  path: string[];
  position: string;
  createdAt: string;
  updatedAt: string;
}

export interface FolderCreate {
  name: string;
  parentFolderId?: string | null;
}

export interface FolderUpdate {
  name?: string;
  parentFolderId?: string | null;
  beforeId?: string | null;
  afterId?: string | null;
}

export interface FolderDeleted {
  deletedFolderId: string;
  destinationFolderId: string | null;
  movedFolderIds: string[];
  movedWorkItemIds: string[];
}

export interface BacklogMove {
  workItemKeys: string[];
}

export interface BacklogMoved {
  movedKeys: string[];
}

export interface PlanSessionAddress {
  targetKeys?: string[];
  sessionId?: string;
}

export interface PlanTurnInput extends PlanSessionAddress {
  body: string;
}

export interface PlanningThread {
  id: string;
  targetKeys: string[];
  turnCount: number;
  lastJobId: string | null;
  lastSubmittedAt: string | null;
  createdAt: string;
  updatedAt: string;
  turns: Record<string, unknown>[];
}

export interface PlanSubmitted {
  jobId: string;
  planId: string;
  statusUrl: string;
}

export interface PlanProposal {
  op: Open<ProposalOp>;
  proposedFields?: Record<string, unknown> | null;
  patch?: Record<string, unknown> | null;
  parentRef: string | null;
  blockedByRefs: string[];
  workItemKey: string | null;
  [extra: string]: unknown;
}

export interface Plan {
  id: string;
  status: Open<PlanStatus>;
  origin: Open<PlanOrigin>;
  title: string | null;
  summary: string | null;
  sourceJobId: string | null;
  proposalCount: number;
  createdAt: string;
  plannedAt: string | null;
  decidedAt: string | null;
  proposals: PlanProposal[];
}

export interface PlanStatusView {
  planId: string;
  status: Open<PlanStatus>;
  origin: Open<PlanOrigin>;
  jobId: string | null;
  proposalCount: number;
  createdAt: string;
  plannedAt: string | null;
  decidedAt: string | null;
  job: ({ reachable: boolean } & Record<string, unknown>) | null;
}

/** Error body of every non-500 error. Clients match on `code`, never on `error`. */
export interface ErrorBody {
  error: string;
  code: string;
  [extra: string]: unknown;
}

/** The 500 body: no code, no stack, no driver text. */
export interface InternalErrorBody {
  error: string;
  requestId: string;
}

/** Named error codes: the contract's, plus DISPATCH.md §7's. */
export const ERROR_CODES = {
  INVALID_REQUEST: 422,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  RUN_CLOSED: 409,
  PRECONDITION_FAILED: 412,
  PAYLOAD_TOO_LARGE: 413,
  RATE_LIMITED: 429,
  ENTITLEMENT_EXHAUSTED: 402,
  UNAVAILABLE: 503,
  FOLDER_NAME_TAKEN: 409,
  INVALID_FOLDER_NAME: 422,
  CROSS_PROJECT_FOLDER: 422,
  FOLDER_CYCLE: 422,
  FOLDER_NOT_FOUND: 404,
  SUBTASK_NEEDS_PLACEMENT: 409,
  NO_RUN_TARGET: 422,
} as const;
export type ErrorCode = keyof typeof ERROR_CODES;

/** Response headers of section 8, on every response. */
export const HEADERS = {
  requestId: 'x-request-id',
  apiVersion: 'x-svc-api-version',
  rateLimit: 'x-ratelimit-limit',
  rateRemaining: 'x-ratelimit-remaining',
  rateReset: 'x-ratelimit-reset',
} as const;
export const REQUEST_ID_PATTERN = /^[A-Za-z0-9._-]{1,128}$/;
