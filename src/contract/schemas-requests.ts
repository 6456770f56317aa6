// Request body schemas. Every body rejects unknown properties: the contract says so for work item
// create and update, and docs/service.md makes the local service strict on every other body too.
import {
  CLOSE_STATUSES, DISPATCH_COMMANDS, DISPOSITIONS, EVENT_BODY_MAX_BYTES, EVENTS_PER_APPEND, EXECUTORS, KINDS,
  OPEN_ORIGINS, PRIORITIES, STOP_REASONS, WORK_TYPES,
} from './types.js';
import type { OperationId } from './operations.js';
import {
  arrayOf, DATE_TIME_PATTERN, enumOf, enumOrNull, key, keyArray, keyOrNull, object, ref, str, strArray,
  strOrNull, type JsonSchema,
} from './schemas-shared.js';

/** 1 to 120 characters once trimmed (api-v1 §8). JS `\s` is exactly the set `trim()` removes. */
export const FOLDER_NAME_PATTERN = '^\\s*\\S(?:[\\s\\S]{0,118}\\S)?\\s*$';

const workItemFields: Record<string, JsonSchema> = {
  kind: enumOf(KINDS),
  title: { type: 'string', minLength: 1 },
  parentKey: keyOrNull,
  descriptionMd: strOrNull,
  priority: enumOf(PRIORITIES),
  type: enumOrNull(WORK_TYPES),
  executor: enumOrNull(EXECUTORS),
  storyPoints: { type: ['number', 'null'], minimum: 0, maximum: 9999.99 },
  estimateMinutes: { type: ['integer', 'null'], minimum: 0, maximum: 9007199254740991 },
  targetRepo: strOrNull,
  targetRepos: strArray,
  targetRepositories: strArray,
  assigneeId: strOrNull,
  dueDate: {
    type: ['string', 'null'],
    pattern: DATE_TIME_PATTERN,
    description: 'UTC date-time ending in `Z`.',
  },
};
const workItemOptional = Object.keys(workItemFields).filter((name) => name !== 'kind' && name !== 'title');

/**
 * On a schema, the error code the contract gives a refusal of that rule (a type error excepted).
 * The HTTP layer can only answer INVALID_REQUEST, so validateRequestBody leaves such rules to the
 * operation's module, which answers the named code; the document still states the rule.
 */
export const ERROR_CODE_KEYWORD = 'x-error-code';

const folderName: JsonSchema = {
  type: 'string',
  pattern: FOLDER_NAME_PATTERN,
  description: 'Trimmed; empty or longer than 120 characters gives INVALID_FOLDER_NAME.',
  [ERROR_CODE_KEYWORD]: 'INVALID_FOLDER_NAME',
};

const planSessionAddress: Record<string, JsonSchema> = {
  targetKeys: { ...keyArray, description: 'The anchor set; order and duplicates do not matter.' },
  sessionId: str,
};

export const requestSchemas: Record<string, JsonSchema> = {
  WorkItemCreate: object(workItemFields, { optional: workItemOptional, strict: true }),
  WorkItemUpdate: object(
    { ...workItemFields, explanationMd: strOrNull },
    { optional: [...Object.keys(workItemFields), 'explanationMd'], strict: true },
  ),
  BacklogMove: object({ workItemKeys: keyArray }, { strict: true }),
  FolderCreate: object({ name: folderName, parentFolderId: strOrNull }, { optional: ['parentFolderId'], strict: true }),
  FolderUpdate: {
    ...object(
      { name: folderName, parentFolderId: strOrNull, beforeId: strOrNull, afterId: strOrNull },
      { optional: ['name', 'parentFolderId', 'beforeId', 'afterId'], strict: true },
    ),
    description: 'Either a rename (`name`) or a placement (the other fields), never both.',
    dependentSchemas: {
      name: {
        not: { anyOf: [{ required: ['parentFolderId'] }, { required: ['beforeId'] }, { required: ['afterId'] }] },
        'x-error': 'a rename (name) cannot be combined with a placement (parentFolderId, beforeId, afterId)',
      },
    },
  },
  PlanSessionAddress: object(planSessionAddress, { optional: ['targetKeys', 'sessionId'], strict: true }),
  PlanTurnInput: object({ body: str, ...planSessionAddress }, { optional: ['targetKeys', 'sessionId'], strict: true }),
  DispatchCardInput: object(
    { workItemKey: key, skipReason: { type: 'string', description: 'Present when the card is already skipped.' } },
    { optional: ['skipReason'], strict: true },
  ),
  DispatchRunOpen: object(
    {
      projectKey: str,
      command: enumOf(DISPATCH_COMMANDS),
      origin: enumOf(OPEN_ORIGINS),
      scopeKey: key,
      scopeLabel: str,
      agent: str,
      model: str,
      idempotencyKey: str,
      cards: arrayOf(ref('DispatchCardInput')),
    },
    { optional: ['origin', 'scopeKey', 'scopeLabel', 'agent', 'model', 'idempotencyKey', 'cards'], strict: true },
  ),
  DispatchRunClose: object(
    { stopReason: enumOf(STOP_REASONS), status: enumOf(CLOSE_STATUSES) },
    { optional: ['status'], strict: true },
  ),
  DispatchEventInput: object(
    {
      workItemKey: key,
      disposition: enumOf(DISPOSITIONS),
      sessionBranch: str,
      exitCode: { type: 'integer' },
      body: {
        type: 'string',
        // The limit is 16 KiB = 16,384 bytes of UTF-8, but maxLength counts characters, so the
        // byte check belongs to the server. maxLength is still sound as a first cut: a string of
        // more than 16,384 characters always has more than 16,384 bytes.
        maxLength: EVENT_BODY_MAX_BYTES,
        'x-max-bytes': EVENT_BODY_MAX_BYTES,
        description: 'Opt-in log payload; refused above 16,384 bytes of UTF-8; cleared after 30 days.',
      },
    },
    { optional: ['workItemKey', 'disposition', 'sessionBranch', 'exitCode', 'body'], strict: true },
  ),
  DispatchEventsAppend: object(
    { events: arrayOf(ref('DispatchEventInput'), { maxItems: EVENTS_PER_APPEND }) },
    { strict: true },
  ),
};

/** Which operation takes which body; `required: false` means the whole body may be omitted. */
export const REQUEST_BODIES: Partial<Record<OperationId, { schema: string; required: boolean }>> = {
  createWorkItem: { schema: 'WorkItemCreate', required: true },
  updateWorkItem: { schema: 'WorkItemUpdate', required: true },
  moveToBacklog: { schema: 'BacklogMove', required: true },
  createFolder: { schema: 'FolderCreate', required: true },
  updateFolder: { schema: 'FolderUpdate', required: true },
  openPlanSession: { schema: 'PlanSessionAddress', required: false },
  addPlanTurn: { schema: 'PlanTurnInput', required: true },
  submitPlanSession: { schema: 'PlanSessionAddress', required: false },
  openDispatchRun: { schema: 'DispatchRunOpen', required: true },
  closeDispatchRun: { schema: 'DispatchRunClose', required: true },
  appendDispatchEvents: { schema: 'DispatchEventsAppend', required: true },
};
