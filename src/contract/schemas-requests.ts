// Request body schemas. Every body rejects unknown properties: the contract says so for work item
// create and update, and docs/service.md makes the local service strict on every other body too.
// Enums here are closed: the service refuses a value it does not know.
import * as Type from 'typebox/type';
import type { TSchema } from 'typebox';
import {
  CLOSE_STATUSES,
  DISPATCH_COMMANDS,
  DISPOSITIONS,
  EVENT_BODY_MAX_BYTES,
  EVENTS_PER_APPEND,
  EXECUTORS,
  KINDS,
  OPEN_ORIGINS,
  PRIORITIES,
  STOP_REASONS,
  WORK_TYPES,
} from './types.js';
import type { OperationId } from './operations.js';
import {
  DATE_TIME_PATTERN,
  enumOf,
  enumOrNull,
  int,
  key,
  keyArray,
  keyOrNull,
  nonEmpty,
  orNull,
  ref,
  STRICT,
  str,
  strArray,
  strOrNull,
} from './schemas-shared.js';

/** 1 to 120 characters once trimmed (the contract's limits). JS `\s` is exactly the set `trim()` removes. */
export const FOLDER_NAME_PATTERN = '^\\s*\\S(?:[\\s\\S]{0,118}\\S)?\\s*$';

/** What a create must name; an update may change them too, but need not. */
const workItemKindAndTitle = { kind: enumOf(KINDS), title: nonEmpty };

const workItemFields = {
  parentKey: Type.Optional(keyOrNull),
  descriptionMd: Type.Optional(strOrNull),
  priority: Type.Optional(enumOf(PRIORITIES)),
  type: Type.Optional(enumOrNull(WORK_TYPES)),
  executor: Type.Optional(enumOrNull(EXECUTORS)),
  storyPoints: Type.Optional(orNull('number', { minimum: 0, maximum: 9999.99 })),
  estimateMinutes: Type.Optional(orNull('integer', { minimum: 0, maximum: 9007199254740991 })),
  targetRepo: Type.Optional(strOrNull),
  targetRepos: Type.Optional(strArray),
  targetRepositories: Type.Optional(strArray),
  assigneeId: Type.Optional(strOrNull),
  dueDate: Type.Optional(orNull('string', { pattern: DATE_TIME_PATTERN, description: 'UTC date-time ending in `Z`.' })),
};

/**
 * On a schema, the error code the contract gives a refusal of that rule (a type error excepted).
 * The HTTP layer can only answer INVALID_REQUEST, so validateRequestBody leaves such rules to the
 * operation's module, which answers the named code; the document still states the rule.
 */
export const ERROR_CODE_KEYWORD = 'x-error-code';

const folderName = Type.String({
  pattern: FOLDER_NAME_PATTERN,
  description: 'Trimmed; empty or longer than 120 characters gives INVALID_FOLDER_NAME.',
  [ERROR_CODE_KEYWORD]: 'INVALID_FOLDER_NAME',
});

const planSessionAddress = {
  targetKeys: Type.Optional(Type.Array(key, { description: 'The anchor set; order and duplicates do not matter.' })),
  sessionId: Type.Optional(str),
};

export const WorkItemCreate = Type.Object({ ...workItemKindAndTitle, ...workItemFields }, STRICT);

// Type.Partial would say this in one word, but it brings TypeBox's type engine (~95 KB) into the
// service's bundle for one schema.
/** Any field of a create, none required, and why the change was made. */
export const WorkItemUpdate = Type.Object(
  {
    kind: Type.Optional(workItemKindAndTitle.kind),
    title: Type.Optional(workItemKindAndTitle.title),
    ...workItemFields,
    // api-v1 shows `status` and the `implementation*` fields on the detail, not here: an update
    // that names one is refused like any unknown property (the local service changes them only
    // through its own `svc server` commands).
    explanationMd: Type.Optional(strOrNull),
  },
  STRICT,
);

export const BacklogMove = Type.Object({ workItemKeys: keyArray }, STRICT);

export const FolderCreate = Type.Object({ name: folderName, parentFolderId: Type.Optional(strOrNull) }, STRICT);

export const FolderUpdate = Type.Object(
  {
    name: Type.Optional(folderName),
    parentFolderId: Type.Optional(strOrNull),
    beforeId: Type.Optional(strOrNull),
    afterId: Type.Optional(strOrNull),
  },
  {
    ...STRICT,
    description: 'Either a rename (`name`) or a placement (the other fields), never both.',
    dependentSchemas: {
      name: {
        not: { anyOf: [{ required: ['parentFolderId'] }, { required: ['beforeId'] }, { required: ['afterId'] }] },
        'x-error': 'a rename (name) cannot be combined with a placement (parentFolderId, beforeId, afterId)',
      },
    },
  },
);

export const PlanSessionAddress = Type.Object(planSessionAddress, STRICT);

export const PlanTurnInput = Type.Object({ body: str, ...planSessionAddress }, STRICT);

/** A card as the client proposes it in the open request. */
export const DispatchCardInput = Type.Object(
  {
    workItemKey: key,
    /** Present when the client already decided to skip the card; the leg starts `skipped`. */
    skipReason: Type.Optional(Type.String({ description: 'Present when the card is already skipped.' })),
  },
  STRICT,
);

export const DispatchRunOpen = Type.Object(
  {
    projectKey: str,
    command: enumOf(DISPATCH_COMMANDS),
    origin: Type.Optional(enumOf(OPEN_ORIGINS)),
    scopeKey: Type.Optional(key),
    scopeLabel: Type.Optional(str),
    agent: Type.Optional(str),
    model: Type.Optional(str),
    idempotencyKey: Type.Optional(str),
    cards: Type.Optional(Type.Array(ref({ DispatchCardInput }))),
  },
  STRICT,
);

export const DispatchRunClose = Type.Object({ stopReason: enumOf(STOP_REASONS), status: Type.Optional(enumOf(CLOSE_STATUSES)) }, STRICT);

/** An event as appended: only the fields the contract names. */
export const DispatchEventInput = Type.Object(
  {
    workItemKey: Type.Optional(key),
    disposition: Type.Optional(enumOf(DISPOSITIONS)),
    sessionBranch: Type.Optional(str),
    exitCode: Type.Optional(int),
    body: Type.Optional(
      Type.String({
        // The limit is 16 KiB = 16,384 bytes of UTF-8, but maxLength counts characters, so the
        // byte check belongs to the server. maxLength is still sound as a first cut: a string of
        // more than 16,384 characters always has more than 16,384 bytes.
        maxLength: EVENT_BODY_MAX_BYTES,
        'x-max-bytes': EVENT_BODY_MAX_BYTES,
        description: 'Opt-in log payload; refused above 16,384 bytes of UTF-8; cleared after 30 days.',
      }),
    ),
  },
  STRICT,
);

export const DispatchEventsAppend = Type.Object({ events: Type.Array(ref({ DispatchEventInput }), { maxItems: EVENTS_PER_APPEND }) }, STRICT);

/** The request schemas, in the document's order. */
export const requestSchemas: Record<string, TSchema> = {
  WorkItemCreate,
  WorkItemUpdate,
  BacklogMove,
  FolderCreate,
  FolderUpdate,
  PlanSessionAddress,
  PlanTurnInput,
  DispatchCardInput,
  DispatchRunOpen,
  DispatchRunClose,
  DispatchEventInput,
  DispatchEventsAppend,
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
