// The machine-readable contract: an OpenAPI 3.1 description of api-v1's 31 operations, built from
// the OPERATIONS table so an operation cannot exist here and not there. Served by the local service
// at /api/openapi/v1.json and used by ./validate.ts to check bodies in and out of that service.
import { OPERATIONS, API_PREFIX, type OperationId } from './operations.js';
import { API_VERSION, EVENTS_PER_APPEND, KINDS, PAGE_DEFAULT, PAGE_MAX, PRIORITIES, REQUEST_ID_PATTERN } from './types.js';
import { requestSchemas, REQUEST_BODIES } from './schemas-requests.js';
import { errorCodesFor, resourceSchemas } from './schemas-resources.js';
import * as Type from 'typebox/type';
import { enumOf, key, KEY_PATTERN_SOURCE, str, type JsonSchema } from './schemas-shared.js';

const JSON_MEDIA = 'application/json';

/** The statuses every operation documents (the contract's endpoints). */
export const COMMON_ERROR_STATUSES = [401, 403, 429, 500] as const;

interface OperationShape {
  summary: string;
  /** Query and header parameters, by name in components.parameters (path ones come from the path). */
  parameters?: string[];
  success: { status: number; schema?: string; headers?: string[] };
  /** Error statuses beyond the common ones. */
  errors: number[];
}

const PAGING = ['cursor', 'limit'];
const READY_FILTERS = ['readyPriority', 'assigneeId', 'sprintId'];

/** An operation's summary, success status and body, extra error statuses, parameters and headers. */
function shape(
  summary: string,
  status: number,
  schema: string | undefined,
  errors: number[],
  extra: { parameters?: string[]; headers?: string[] } = {},
): OperationShape {
  return { summary, parameters: extra.parameters, success: { status, schema, headers: extra.headers }, errors };
}

const SHAPES: Record<OperationId, OperationShape> = {
  getMe: shape('Who the token is, and what it may do', 200, 'Identity', []),
  listWorkspaces: shape('Workspaces the token owner belongs to', 200, 'WorkspacePage', [422], { parameters: PAGING }),
  listProjects: shape('Projects the owner may browse', 200, 'ProjectPage', [422], { parameters: PAGING }),
  getProject: shape('One project', 200, 'Project', [404]),
  listWorkItems: shape('Work items of a project', 200, 'WorkItemSummaryPage', [404, 422], {
    parameters: [...PAGING, 'filter'],
  }),
  createWorkItem: shape('Create a work item', 201, 'WorkItemDetail', [404, 422]),
  countWorkItems: shape('Exact count of what listWorkItems would page', 200, 'WorkItemCount', [404, 422], {
    parameters: ['filter'],
  }),
  getWorkItem: shape('One work item by key', 200, 'WorkItemDetail', [404], { headers: ['ETag'] }),
  // The contract shows 200/401/403/404/412 for updateWorkItem; 422 follows from "422 where input is validated".
  updateWorkItem: shape('Update a work item', 200, 'WorkItemDetail', [404, 412, 422], {
    parameters: ['ifMatch'],
    headers: ['ETag'],
  }),
  listBacklog: shape('The backlog, in rank order, with a total', 200, 'BacklogPage', [404, 422], {
    parameters: [...PAGING, 'filter'],
  }),
  moveToBacklog: shape('Move items out of their sprint, atomically', 200, 'BacklogMoved', [404, 422]),
  listDesigns: shape('Approved designs, newest first', 200, 'DesignPage', [404, 422], {
    parameters: [...PAGING, 'pathPrefix', 'designQuery'],
  }),
  listFolders: shape('One level of child folders', 200, 'FolderPage', [404, 422], {
    parameters: [...PAGING, 'parentFolderId'],
  }),
  createFolder: shape('Create a folder, last among its siblings', 201, 'Folder', [404, 409, 422], {
    headers: ['Location'],
  }),
  getFolder: shape('One folder', 200, 'Folder', [404]),
  updateFolder: shape('Rename or place a folder', 200, 'Folder', [404, 409, 422]),
  deleteFolder: shape('Delete a folder, moving its contents up', 200, 'FolderDeleted', [404, 409]),
  openPlanSession: shape('Open or resume the planning thread', 200, 'PlanningThread', [404, 422]),
  addPlanTurn: shape('Add one turn without submitting', 200, 'PlanningThread', [404, 409, 422]),
  submitPlanSession: shape('Submit the thread as one planning job', 202, 'PlanSubmitted', [402, 404, 422, 503]),
  getPlan: shape('A plan with its proposals', 200, 'Plan', [404]),
  getPlanStatus: shape('Status of a plan and its job', 200, 'PlanStatusView', [404]),
  listReadyBugs: shape('Ready bug work, in groups', 200, 'ReadyBugGroupPage', [404, 422], {
    parameters: [...PAGING, 'readyKind', ...READY_FILTERS, 'ancestor', 'allowSoftBlock'],
  }),
  listReadyContainers: shape('Runnable containers; items[0] runs next', 200, 'ReadyContainerPage', [404, 422], {
    parameters: [...PAGING, ...READY_FILTERS],
  }),
  openDispatchRun: shape('Record a dispatch run over its ordered cards', 201, 'DispatchRunOpened', [404, 409, 422]),
  getDispatchRun: shape('A run with its cards and event cursor', 200, 'DispatchRun', [404]),
  closeDispatchRun: shape('Close a run and settle its legs', 200, 'DispatchRun', [404, 409, 422]),
  // NO_RUN_TARGET is a 422 in the local service (docs/service.md).
  getCloseOutPrompt: shape('The close-out prompt of a scoped run', 200, 'CloseOutPrompt', [404, 422]),
  appendDispatchEvents: shape(`Append up to ${EVENTS_PER_APPEND} events in order`, 200, 'DispatchEventsAppended', [404, 409, 413, 422]),
  getGitCredential: shape('Trade a hosted run credential for git credentials', 200, 'GitCredentials', [404, 409, 503]),
  heartbeatDispatchRun: shape('Keep a local run alive', 204, undefined, [404, 409]),
};

const STATUS_TEXT: Record<number, string> = {
  401: 'Authentication required: no, malformed, unknown, revoked or expired token',
  402: 'A plan entitlement is exhausted; retrying does not help until it is lifted',
  403: 'Valid token, missing permission',
  404: "Does not exist, or outside the token's workspace (the same answer)",
  409: 'Conflicts with existing state',
  412: '`If-Match` no longer matches the work item',
  413: 'Larger than the per-file plan limit',
  422: 'Caller-fixable malformation',
  429: 'Rate-limit budget for the window exhausted; back off until `X-RateLimit-Reset`',
  500: 'Unexpected fault',
  503: 'A dependency (the planning service) is unreachable or misconfigured; retry later',
};

const digits: JsonSchema = { type: 'string', pattern: '^[0-9]+$' };
const header = (description: string, schema: object) => ({ required: true, description, schema });

const headers = {
  'X-Request-Id': header('Echo of a well-formed request id, else a fresh one.', {
    type: 'string',
    pattern: REQUEST_ID_PATTERN.source,
  }),
  'X-Svc-Api-Version': header('The contract version; equals info.version.', {
    type: 'string',
    pattern: '^[0-9]+\\.[0-9]+\\.[0-9]+$',
    const: API_VERSION,
  }),
  'X-RateLimit-Limit': header('Requests the token may make in the window.', digits),
  'X-RateLimit-Remaining': header('Requests left in the window; 0 before a 429.', digits),
  'X-RateLimit-Reset': header('Unix epoch seconds when the window resets. No Retry-After is sent.', digits),
  ETag: header('Pass back as `If-Match` on update.', { type: 'string', minLength: 1 }),
  Location: header('Where the created resource is read.', { type: 'string', minLength: 1 }),
};

/** The section-8 headers every response carries. */
export const SECTION_8_HEADERS = ['X-Request-Id', 'X-Svc-Api-Version', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'] as const;

const headerRefs = (names: readonly string[]) => Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/${name}` }]));

const query = (name: string, schema: object, description: string, extra: JsonSchema = {}) => ({
  name,
  in: 'query',
  required: false,
  description,
  schema,
  ...extra,
});
const repeatable = { style: 'form', explode: true };
const emptyMeansOmitted = 'Empty means omitted.';

const parameters: Record<string, JsonSchema> = {
  cursor: query('cursor', { type: 'string' }, "Opaque `nextCursor` of a previous page of the same collection; another collection's is a 422."),
  limit: query('limit', { type: 'integer', minimum: 1, default: PAGE_DEFAULT }, `Page size; above ${PAGE_MAX} is clamped to ${PAGE_MAX}, not rejected.`),
  filter: query('filter', { type: 'string', minLength: 1 }, 'A filter expression; an unknown field, operator or value is a 422 naming which.'),
  pathPrefix: query('pathPrefix', str, 'Only designs holding an asset whose repository `sourcePath` starts with it.'),
  designQuery: query('query', str, "Case-insensitive substring of the design card's title."),
  parentFolderId: query('parentFolderId', str, 'Omit or empty for the project root.'),
  readyKind: query('kind', Type.Array(enumOf(KINDS)), 'Repeatable; an unknown kind is a 422.', repeatable),
  readyPriority: query('priority', Type.Array(enumOf(PRIORITIES)), 'Repeatable; unknown priority is a 422.', repeatable),
  assigneeId: query('assigneeId', str, `A user id, or \`none\` for unassigned. ${emptyMeansOmitted}`),
  ancestor: query('ancestor', Type.Array(key), 'Repeatable container keys: only ready leaves strictly beneath them; the container itself never.', repeatable),
  sprintId: query('sprintId', str, `A sprint id or \`active\`; direct membership only. ${emptyMeansOmitted}`),
  allowSoftBlock: query(
    'allowSoftBlock',
    { type: 'string', enum: ['true', 'false', ''] },
    "`true` drops the parent-ready cascade (a leaf's own blockers must still be done); other values are a 422.",
  ),
  ifMatch: {
    name: 'If-Match',
    in: 'header',
    required: false,
    description: 'An ETag from a prior read; a moved item answers 412. Absent: last write wins.',
    schema: str,
  },
};

const schemaRef = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });

const pathParameter = (name: string): JsonSchema => ({
  name,
  in: 'path',
  required: true,
  schema: name === 'key' ? { type: 'string', pattern: KEY_PATTERN_SOURCE } : { type: 'string', minLength: 1 },
});

function errorResponse(status: number): JsonSchema {
  const codes = errorCodesFor(status);
  const schema = status === 500 ? schemaRef('InternalErrorBody') : { allOf: [schemaRef('ErrorBody'), { properties: { code: { enum: codes } } }] };
  const responseHeaders: Record<string, unknown> = headerRefs(SECTION_8_HEADERS);
  // The budget is spent before a 429 is answered (the contract's limits).
  if (status === 429) responseHeaders['X-RateLimit-Remaining'] = header('0 on a 429.', { type: 'string', const: '0' });
  return { description: STATUS_TEXT[status], headers: responseHeaders, content: { [JSON_MEDIA]: { schema } } };
}

function operationObject(op: (typeof OPERATIONS)[number]): JsonSchema {
  const shape = SHAPES[op.id];
  const pathNames = [...op.path.matchAll(/\{(\w+)\}/g)].map((match) => match[1] as string);
  const success: JsonSchema = {
    description: shape.summary,
    headers: headerRefs([...SECTION_8_HEADERS, ...(shape.success.headers ?? [])]),
  };
  if (shape.success.schema) success.content = { [JSON_MEDIA]: { schema: schemaRef(shape.success.schema) } };
  const responses: Record<string, JsonSchema> = { [String(shape.success.status)]: success };
  for (const status of [...shape.errors, ...COMMON_ERROR_STATUSES].sort((a, b) => a - b)) {
    responses[String(status)] = { $ref: `#/components/responses/Error${status}` };
  }
  const operation: JsonSchema = {
    operationId: op.id,
    summary: shape.summary,
    'x-operation-number': op.n,
    'x-permission': op.permission,
    security: [{ bearer: [] }],
    parameters: [...pathNames.map(pathParameter), ...(shape.parameters ?? []).map((name) => ({ $ref: `#/components/parameters/${name}` }))],
    responses,
  };
  const body = REQUEST_BODIES[op.id];
  if (body) {
    operation.requestBody = { required: body.required, content: { [JSON_MEDIA]: { schema: schemaRef(body.schema) } } };
  }
  return operation;
}

function buildPaths(): Record<string, Record<string, JsonSchema>> {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const op of OPERATIONS) {
    (paths[op.path] ??= {})[op.method.toLowerCase()] = operationObject(op);
  }
  return paths;
}

const ALL_ERROR_STATUSES = [401, 402, 403, 404, 409, 412, 413, 422, 429, 500, 503];

/** The OpenAPI 3.1 document of api-v1, served at /api/openapi/v1.json. */
export const openapiDocument = {
  openapi: '3.1.0',
  info: {
    title: 'Work-Tracking Service API',
    version: API_VERSION,
    // the contract's versioning: the description is published with its version and its operation count.
    'x-operation-count': OPERATIONS.length,
    description:
      'Version 1 of the work-tracking REST contract. Additive within the major version: clients must ' +
      'tolerate unknown fields and enum values. `x-svc-closed` marks schemas the local service emits ' +
      'no other fields for; it is a promise of that implementation, not a limit on clients. ' +
      '`x-error-code` names the code a refusal of that rule carries instead of INVALID_REQUEST.',
  },
  servers: [{ url: API_PREFIX }],
  security: [{ bearer: [] }],
  paths: buildPaths(),
  components: {
    securitySchemes: {
      bearer: {
        type: 'http',
        scheme: 'bearer',
        description: "A personal access token (`svc_pat_…`), or a hosted run's own credential.",
      },
    },
    schemas: { ...resourceSchemas, ...requestSchemas },
    parameters,
    headers,
    responses: Object.fromEntries(ALL_ERROR_STATUSES.map((status) => [`Error${status}`, errorResponse(status)])),
  },
};
