// The wire types of api-v1, shared by the client (src/api) and the local service (src/server).
// The schemas of the OpenAPI document (./schemas-*.ts, TypeBox) are the source: each wire type
// here is the static type of its schema, so the two cannot drift. This module holds the
// constants the schemas are built from and only type-level imports of the schemas, so the CLI,
// which imports it, loads no schema-building code.
// Open enums are `Known | (string & {})`: the contract is additive, so a client must carry an
// unknown value through instead of crashing on it.
import type { Static } from 'typebox';
import type * as dispatch from './schemas-dispatch.js';
import type * as requests from './schemas-requests.js';
import type * as resources from './schemas-resources.js';
import type * as workItems from './schemas-work-items.js';

/** An enum the contract may grow: known values autocomplete, unknown strings still type-check. */
export type Open<T extends string> = T | (string & {});

export const KINDS = ['epic', 'story', 'task', 'subtask', 'bug'] as const;
export type Kind = (typeof KINDS)[number];

export const PRIORITIES = ['lowest', 'low', 'medium', 'high', 'highest'] as const;
export type Priority = (typeof PRIORITIES)[number];

export const WORK_TYPES = [
  'code',
  'design',
  'test',
  'content',
  'copy',
  'translate',
  'research',
  'review',
  'verification',
  'decision',
  'deploy',
  'manual',
  'legal',
  'chore',
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

export const STOP_REASONS = ['drained', 'completed', 'max', 'halted', 'interrupted', 'replanned', 'gated', 'abandoned'] as const;
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

/** Leg dispositions of the local service (docs/service.md); the contract shows only some of them. */
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

export type Identity = Static<typeof resources.Identity>;
export type Workspace = Static<typeof resources.Workspace>;
export type Project = Static<typeof resources.Project>;
export type Folder = Static<typeof resources.Folder>;
export type FolderDeleted = Static<typeof resources.FolderDeleted>;
export type BacklogMoved = Static<typeof resources.BacklogMoved>;
export type PlanningThread = Static<typeof resources.PlanningThread>;
export type PlanSubmitted = Static<typeof resources.PlanSubmitted>;
export type PlanProposal = Static<typeof resources.PlanProposal>;
export type Plan = Static<typeof resources.Plan>;
export type PlanStatusView = Static<typeof resources.PlanStatusView>;
/** Error body of every non-500 error. Clients match on `code`, never on `error`. */
export type ErrorBody = Static<typeof resources.ErrorBody>;
/** The 500 body: no code, no stack, no driver text. */
export type InternalErrorBody = Static<typeof resources.InternalErrorBody>;

export type DependencyRef = Static<typeof workItems.DependencyRef>;
export type Dependencies = Static<typeof workItems.Dependencies>;
export type WorkItemSummary = Static<typeof workItems.WorkItemSummary>;
export type LinkItem = Static<typeof workItems.LinkItem>;
export type ChildItem = Static<typeof workItems.ChildItem>;
export type Links = Static<typeof workItems.Links>;
export type Readiness = Static<typeof workItems.Readiness>;
export type TargetRepository = Static<typeof workItems.TargetRepository>;
export type Delivery = Static<typeof workItems.Delivery>;
export type WorkItemDetail = Static<typeof workItems.WorkItemDetail>;
/** The count response's field is not shown by the contract; the local service answers `{count}`. */
export type WorkItemCount = Static<typeof workItems.WorkItemCount>;
/** A row of ready/bugs: one group. A ready bug alone has `container: null`. */
export type ReadyBugGroup = Static<typeof workItems.ReadyBugGroup>;
/** A row of ready/containers. */
export type ReadyContainer = Static<typeof workItems.ReadyContainer>;

/** A card of a run as the local service records it (the contract leaves the shape open). */
export type DispatchCard = Static<typeof dispatch.DispatchCard>;
export type DispatchRun = Static<typeof dispatch.DispatchRun>;
export type DispatchRunOpened = Static<typeof dispatch.DispatchRunOpened>;
export type DispatchEventsAppended = Static<typeof dispatch.DispatchEventsAppended>;
export type CloseOutPrompt = Static<typeof dispatch.CloseOutPrompt>;
/** A git credential entry of getGitCredential (inner shape left open by the contract). */
export type GitCredential = Static<typeof dispatch.GitCredential>;
export type GitCredentials = Static<typeof dispatch.GitCredentials>;

export type WorkItemCreate = Static<typeof requests.WorkItemCreate>;
export type WorkItemUpdate = Static<typeof requests.WorkItemUpdate>;
export type BacklogMove = Static<typeof requests.BacklogMove>;
export type FolderCreate = Static<typeof requests.FolderCreate>;
export type FolderUpdate = Static<typeof requests.FolderUpdate>;
export type PlanSessionAddress = Static<typeof requests.PlanSessionAddress>;
export type PlanTurnInput = Static<typeof requests.PlanTurnInput>;
/** A card as the client proposes it in the open request. */
export type DispatchCardInput = Static<typeof requests.DispatchCardInput>;
export type DispatchRunOpen = Static<typeof requests.DispatchRunOpen>;
export type DispatchRunClose = Static<typeof requests.DispatchRunClose>;
/** An event as appended: only the fields the contract names. */
export type DispatchEventInput = Static<typeof requests.DispatchEventInput>;
export type DispatchEventsAppend = Static<typeof requests.DispatchEventsAppend>;

/** Query filters of the ready lanes (parameters, not a body: the document has no schema of them). */
export interface ReadyLaneFilters {
  kind?: string[];
  priority?: string[];
  assigneeId?: string;
  ancestor?: string[];
  sprintId?: string;
  allowSoftBlock?: string;
}

/** Named error codes: the contract's, plus docs/service.md's. */
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

/** The response headers api-v1 puts on every response. */
export const HEADERS = {
  requestId: 'x-request-id',
  apiVersion: 'x-svc-api-version',
  rateLimit: 'x-ratelimit-limit',
  rateRemaining: 'x-ratelimit-remaining',
  rateReset: 'x-ratelimit-reset',
} as const;
export const REQUEST_ID_PATTERN = /^[A-Za-z0-9._-]{1,128}$/;
