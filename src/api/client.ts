// One small function per operation of api-v1, named as in src/contract/operations.ts.
// The core (request.ts) does auth, JSON, retries and errors; each function here only says which
// operation, which path parameters, which query and which body.
import { randomUUID } from 'node:crypto';
import type { OperationId } from '../contract/operations.js';
import type {
  BacklogMove,
  BacklogMoved,
  CloseOutPrompt,
  DispatchEventsAppend,
  DispatchEventsAppended,
  DispatchRun,
  DispatchRunClose,
  DispatchRunOpen,
  DispatchRunOpened,
  Folder,
  FolderCreate,
  FolderDeleted,
  FolderUpdate,
  GitCredentials,
  Identity,
  Page,
  Plan,
  PlanSessionAddress,
  PlanStatusView,
  PlanSubmitted,
  PlanTurnInput,
  PlanningThread,
  Project,
  RankedPage,
  ReadyBugGroup,
  ReadyContainer,
  ReadyLaneFilters,
  WorkItemCount,
  WorkItemCreate,
  WorkItemDetail,
  WorkItemSummary,
  WorkItemUpdate,
  Workspace,
} from '../contract/types.js';
import { createTransport, type CallSpec, type ClientOptions, type Reply } from './request.js';
import type { WaitBudget } from './retry.js';

/** Paging parameters of listWorkspaces, listProjects, listWorkItems, listBacklog, listDesigns, listFolders, listReadyBugs, listReadyContainers. */
export interface PageQuery {
  cursor?: string;
  /** 1..100 (the service clamps above 100); default 50. */
  limit?: number;
}

/** A design row: the contract leaves its shape open, so it is carried through as it comes. */
export type DesignRow = Record<string, unknown>;

/** A work item with the `ETag` its read answered, for a later `If-Match`. */
export interface WorkItemWithEtag {
  item: WorkItemDetail;
  /** Null when the service sent no ETag. */
  etag: string | null;
}

/** Per-call options every operation accepts. */
export interface CallOptions {
  signal?: AbortSignal;
  /** The wait budget of the loop making the call: the call's own retries draw on it too. */
  budget?: WaitBudget;
}

export type ApiClient = ReturnType<typeof createApiClient>;

/**
 * Builds the client. Throws ClientConfigError (before any request) for a token without the
 * expected prefix, a base URL that is not http(s), or plain http to a non-loopback host.
 */
export function createApiClient(opts: ClientOptions) {
  const transport = createTransport(opts);
  const send = <T>(operationId: OperationId, spec: Omit<CallSpec, 'operationId'> = {}, o?: CallOptions): Promise<Reply<T>> =>
    transport.call<T>({ ...spec, operationId, ...(o?.signal ? { signal: o.signal } : {}), ...(o?.budget ? { budget: o.budget } : {}) });
  const json = async <T>(operationId: OperationId, spec: Omit<CallSpec, 'operationId'> = {}, o?: CallOptions): Promise<T> =>
    (await send<T>(operationId, spec, o)).body;
  const withEtag = (reply: Reply<WorkItemDetail>): WorkItemWithEtag => ({ item: reply.body, etag: reply.headers.etag ?? null });

  return {
    ...projectOperations(json),
    ...runOperations(json, send),
    /** The normalised base URL (no `/api/v1`). */
    baseUrl: transport.baseUrl,
    /** Ends the client; call once when the command ends (Transport.close: nothing is held today). */
    close: () => transport.close(),

    // 1-4: identity, workspaces, projects
    getMe: (o?: CallOptions) => json<Identity>('getMe', {}, o),
    listWorkspaces: (q: PageQuery = {}, o?: CallOptions) => json<Page<Workspace>>('listWorkspaces', { query: { ...q } }, o),
    listProjects: (q: PageQuery = {}, o?: CallOptions) => json<Page<Project>>('listProjects', { query: { ...q } }, o),
    getProject: (projectKey: string, o?: CallOptions) => json<Project>('getProject', { params: { projectKey } }, o),

    // 5-9: work items
    listWorkItems: (projectKey: string, q: PageQuery & { filter?: string } = {}, o?: CallOptions) =>
      json<Page<WorkItemSummary>>('listWorkItems', { params: { projectKey }, query: { ...q } }, o),
    createWorkItem: (projectKey: string, body: WorkItemCreate, o?: CallOptions) => json<WorkItemDetail>('createWorkItem', { params: { projectKey }, body }, o),
    countWorkItems: (projectKey: string, q: { filter?: string } = {}, o?: CallOptions) =>
      json<WorkItemCount>('countWorkItems', { params: { projectKey }, query: { ...q } }, o),
    getWorkItem: async (key: string, o?: CallOptions) => withEtag(await send<WorkItemDetail>('getWorkItem', { params: { key } }, o)),
    /** With `ifMatch`, a 412 ApiError (code PRECONDITION_FAILED) means the item moved since the read. */
    updateWorkItem: async (key: string, body: WorkItemUpdate, opt: CallOptions & { ifMatch?: string } = {}) =>
      withEtag(
        await send<WorkItemDetail>(
          'updateWorkItem',
          {
            params: { key },
            body,
            ...(opt.ifMatch !== undefined ? { headers: { 'if-match': opt.ifMatch } } : {}),
          },
          opt,
        ),
      ),
  };
}

type Json = <T>(operationId: OperationId, spec?: Omit<CallSpec, 'operationId'>, o?: CallOptions) => Promise<T>;
type Send = <T>(operationId: OperationId, spec?: Omit<CallSpec, 'operationId'>, o?: CallOptions) => Promise<Reply<T>>;

/** Backlog, designs and folders, planning, ready lanes. */
function projectOperations(json: Json) {
  return {
    // 10-11: backlog
    listBacklog: (projectKey: string, q: PageQuery & { filter?: string } = {}, o?: CallOptions) =>
      json<RankedPage<WorkItemSummary>>('listBacklog', { params: { projectKey }, query: { ...q } }, o),
    moveToBacklog: (projectKey: string, body: BacklogMove, o?: CallOptions) => json<BacklogMoved>('moveToBacklog', { params: { projectKey }, body }, o),

    // 12-17: designs and folders
    listDesigns: (projectKey: string, q: PageQuery & { pathPrefix?: string; query?: string } = {}, o?: CallOptions) =>
      json<Page<DesignRow>>('listDesigns', { params: { projectKey }, query: { ...q } }, o),
    listFolders: (projectKey: string, q: PageQuery & { parentFolderId?: string } = {}, o?: CallOptions) =>
      json<Page<Folder>>('listFolders', { params: { projectKey }, query: { ...q } }, o),
    createFolder: (projectKey: string, body: FolderCreate, o?: CallOptions) => json<Folder>('createFolder', { params: { projectKey }, body }, o),
    getFolder: (folderId: string, o?: CallOptions) => json<Folder>('getFolder', { params: { folderId } }, o),
    updateFolder: (folderId: string, body: FolderUpdate, o?: CallOptions) => json<Folder>('updateFolder', { params: { folderId }, body }, o),
    deleteFolder: (folderId: string, o?: CallOptions) => json<FolderDeleted>('deleteFolder', { params: { folderId } }, o),

    // 18-22: planning
    openPlanSession: (projectKey: string, body: PlanSessionAddress = {}, o?: CallOptions) =>
      json<PlanningThread>('openPlanSession', { params: { projectKey }, body }, o),
    addPlanTurn: (projectKey: string, body: PlanTurnInput, o?: CallOptions) => json<PlanningThread>('addPlanTurn', { params: { projectKey }, body }, o),
    submitPlanSession: (projectKey: string, body: PlanSessionAddress = {}, o?: CallOptions) =>
      json<PlanSubmitted>('submitPlanSession', { params: { projectKey }, body }, o),
    getPlan: (planId: string, o?: CallOptions) => json<Plan>('getPlan', { params: { planId } }, o),
    getPlanStatus: (planId: string, o?: CallOptions) => json<PlanStatusView>('getPlanStatus', { params: { planId } }, o),

    // 23-24: ready lanes (array filters become repeated query parameters)
    listReadyBugs: (projectKey: string, q: PageQuery & ReadyLaneFilters = {}, o?: CallOptions) =>
      json<Page<ReadyBugGroup>>('listReadyBugs', { params: { projectKey }, query: { ...q } }, o),
    listReadyContainers: (projectKey: string, q: PageQuery & Pick<ReadyLaneFilters, 'priority' | 'assigneeId' | 'sprintId'> = {}, o?: CallOptions) =>
      json<Page<ReadyContainer>>('listReadyContainers', { params: { projectKey }, query: { ...q } }, o),
  };
}

/** Dispatch runs. */
function runOperations(json: Json, send: Send) {
  return {
    // 25-31: dispatch runs
    /**
     * Retried on faults with one idempotencyKey (a fresh UUID when the body has none), so a retry
     * finds the run the lost attempt created: `created: false` then.
     */
    openDispatchRun: (body: DispatchRunOpen, o?: CallOptions) =>
      json<DispatchRunOpened>('openDispatchRun', { body: { ...body, idempotencyKey: body.idempotencyKey ?? randomUUID() } }, o),
    getDispatchRun: (id: string, o?: CallOptions) => json<DispatchRun>('getDispatchRun', { params: { id } }, o),
    closeDispatchRun: (id: string, body: DispatchRunClose, o?: CallOptions) => json<DispatchRun>('closeDispatchRun', { params: { id }, body }, o),
    getCloseOutPrompt: (id: string, o?: CallOptions) => json<CloseOutPrompt>('getCloseOutPrompt', { params: { id } }, o),
    /**
     * Not retried after a failure that may have been applied: the ApiError then has
     * `ambiguous: true` and the caller compares the run's `seq` (getDispatchRun) before resending.
     */
    appendDispatchEvents: (id: string, body: DispatchEventsAppend, o?: CallOptions) =>
      json<DispatchEventsAppended>('appendDispatchEvents', { params: { id }, body }, o),
    /** appendDispatchEvents with the body encoded already (the event stream sends its journal's bytes). */
    appendDispatchEventsEncoded: (id: string, encoded: Uint8Array, o?: CallOptions) =>
      json<DispatchEventsAppended>('appendDispatchEvents', { params: { id }, encodedBody: encoded }, o),
    getGitCredential: (id: string, o?: CallOptions) => json<GitCredentials>('getGitCredential', { params: { id } }, o),
    /** 204 on success; a 409 (run closed) is never retried. */
    heartbeatDispatchRun: async (id: string, o?: CallOptions): Promise<void> => {
      await send<undefined>('heartbeatDispatchRun', { params: { id } }, o);
    },
  };
}
