// Checks bodies and headers against the OpenAPI document: the local service validates every
// request body with it (its 422 message is the first issue) and, in tests, every response.
// Schemas are compiled on first use per operation and cached: compiling all 31 up front would cost
// start-up time for nothing. The CLI must not import this module (ajv is heavy to load).
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import { openapiDocument } from './openapi.js';
import { OPERATIONS, type OperationId } from './operations.js';
import { ERROR_CODE_KEYWORD, FOLDER_NAME_PATTERN, REQUEST_BODIES } from './schemas-requests.js';
import { REQUEST_ID_PATTERN } from './types.js';
import { CLOSED_KEYWORD, DATE_TIME_PATTERN, KEY_PATTERN_SOURCE, type JsonSchema } from './schemas-shared.js';

export interface SchemaIssue {
  /** Where in the body, as `events[0].body`; empty for the body itself. */
  path: string;
  /** One line, fit for a 422 error sentence: "storyPoints must be <= 9999.99". */
  message: string;
}

const DOC_ID = 'https://svc.local/api/openapi/v1.json';
const JSON_MEDIA = 'application/json';

/** Human words for the document's patterns, so a failure says what was expected. */
const PATTERN_WORDS: Record<string, string> = {
  [DATE_TIME_PATTERN]: 'a UTC date-time ending in Z',
  [KEY_PATTERN_SOURCE]: 'a work item key like ABC-123',
  [FOLDER_NAME_PATTERN]: '1 to 120 characters once trimmed',
  [REQUEST_ID_PATTERN.source]: '1 to 128 of A-Z a-z 0-9 . _ -',
  '^[0-9]+$': 'digits',
};

/**
 * True when the date of an ISO date-time that already matched DATE_TIME_PATTERN exists: the
 * pattern only bounds each field, so `2025-02-30` passes it, and `Date` would quietly shift that to
 * March 2 (the value stored would not be the value sent).
 */
export function isRealDate(text: string): boolean {
  const [year, month, day] = text.slice(0, 10).split('-').map(Number) as [number, number, number];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/**
 * The regular expressions ajv runs for `pattern`: plain ones, except the document's date-time
 * pattern, which also requires a real calendar date. Done here rather than as a new keyword so the
 * published document stays as it is (a date-time is still described by its pattern).
 */
const patternEngine = Object.assign(
  (pattern: string, flags: string) => {
    const rx = new RegExp(pattern, flags);
    if (pattern !== DATE_TIME_PATTERN) return rx;
    // ajv caches compiled patterns under toString(): keep it distinct from the plain RegExp's.
    return { test: (s: string) => rx.test(s) && isRealDate(s), toString: () => `calendar:${rx.toString()}` };
  },
  { code: 'svcPatternEngine' },
);

let ajvInstance: Ajv2020 | undefined;
const compiled = new Map<string, ValidateFunction>();

function ajv(): Ajv2020 {
  if (ajvInstance) return ajvInstance;
  // strict: false lets OpenAPI's own keywords (deprecated, x-*) sit in the schemas; verbose puts the
  // failing schema on each error so `x-error` can supply its message.
  const instance = new Ajv2020({ strict: false, allErrors: true, verbose: true, code: { regExp: patternEngine } });
  instance.addKeyword({
    keyword: CLOSED_KEYWORD,
    schemaType: 'boolean',
    errors: true,
    validate: function closed(enabled: boolean, data: unknown, parentSchema?: JsonSchema): boolean {
      if (!enabled || typeof data !== 'object' || data === null || Array.isArray(data)) return true;
      const known = (parentSchema?.properties ?? {}) as Record<string, unknown>;
      const extra = Object.keys(data).filter((name) => !Object.hasOwn(known, name));
      (closed as { errors?: Partial<ErrorObject>[] }).errors = extra.map((name) => ({
        keyword: CLOSED_KEYWORD,
        params: { additionalProperty: name },
        message: 'must NOT have additional properties',
      }));
      return extra.length === 0;
    },
  });
  instance.addSchema(openapiDocument, DOC_ID);
  ajvInstance = instance;
  return instance;
}

const escapeSegment = (segment: string) => encodeURIComponent(segment.replace(/~/g, '~0').replace(/\//g, '~1'));

/** The validator of the schema at `segments` (a JSON pointer into the document), compiled once. */
function validatorAt(segments: string[]): ValidateFunction {
  const pointer = segments.map(escapeSegment).join('/');
  let validate = compiled.get(pointer);
  if (!validate) {
    validate = ajv().compile({ $ref: `${DOC_ID}#/${pointer}` });
    compiled.set(pointer, validate);
  }
  return validate;
}

function operation(operationId: OperationId) {
  const op = OPERATIONS.find((candidate) => candidate.id === operationId);
  if (!op) throw new Error(`unknown operation ${operationId}`);
  return op;
}

const paths = openapiDocument.paths as Record<string, Record<string, { responses: Record<string, JsonSchema> }>>;
const componentResponses = openapiDocument.components.responses as Record<string, JsonSchema>;

/** The response object of a status, and the pointer to it (following one component $ref). */
function responseOf(operationId: OperationId, status: number): { response: JsonSchema; at: string[] } | undefined {
  const op = operation(operationId);
  const method = op.method.toLowerCase();
  const response = paths[op.path]?.[method]?.responses[String(status)];
  if (!response) return undefined;
  const target = response.$ref;
  if (typeof target === 'string') {
    const name = target.replace('#/components/responses/', '');
    const resolved = componentResponses[name];
    return resolved ? { response: resolved, at: ['components', 'responses', name] } : undefined;
  }
  return { response, at: ['paths', op.path, method, 'responses', String(status)] };
}

/** Runs on every request of the local service: one map lookup, then the compiled function. */
const requestValidators = new Map<OperationId, ValidateFunction>();

export function validateRequestBody(operationId: OperationId, body: unknown): SchemaIssue[] {
  const shape = REQUEST_BODIES[operationId];
  if (!shape) return [];
  if (body === undefined) return shape.required ? [{ path: '', message: 'a JSON body is required' }] : [];
  let validate = requestValidators.get(operationId);
  if (!validate) {
    const op = operation(operationId);
    validate = validatorAt(['paths', op.path, op.method.toLowerCase(), 'requestBody', 'content', JSON_MEDIA, 'schema']);
    requestValidators.set(operationId, validate);
  }
  return validate(body) ? [] : toIssues(validate.errors?.filter((error) => !ownedByModule(error)));
}

/**
 * A rule the contract gives its own error code (INVALID_FOLDER_NAME for a folder name) is left to
 * the operation's module so the client gets that code, not INVALID_REQUEST. Type errors stay here:
 * the module may rely on the type.
 */
function ownedByModule(error: ErrorObject): boolean {
  const code = (error.parentSchema as JsonSchema | undefined)?.[ERROR_CODE_KEYWORD];
  return error.keyword !== 'type' && typeof code === 'string';
}

export function validateResponse(operationId: OperationId, status: number, body: unknown): SchemaIssue[] {
  const found = responseOf(operationId, status);
  if (!found) return [{ path: '', message: `status ${status} is not documented for ${operationId}` }];
  if (!found.response.content) {
    return body === undefined || body === '' ? [] : [{ path: '', message: `a ${status} answer has no body` }];
  }
  const validate = validatorAt([...found.at, 'content', JSON_MEDIA, 'schema']);
  return validate(body) ? [] : toIssues(validate.errors);
}

export function validateResponseHeaders(operationId: OperationId, status: number, headers: Record<string, string | string[] | undefined>): SchemaIssue[] {
  const found = responseOf(operationId, status);
  if (!found) return [{ path: '', message: `status ${status} is not documented for ${operationId}` }];
  const byLowerName = new Map(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
  const issues: SchemaIssue[] = [];
  const declared = (found.response.headers ?? {}) as Record<string, JsonSchema>;
  for (const [name, declaration] of Object.entries(declared)) {
    const componentName = typeof declaration.$ref === 'string' ? declaration.$ref.split('/').pop() : undefined;
    const at = componentName ? ['components', 'headers', componentName] : [...found.at, 'headers', name];
    const required = componentName
      ? (openapiDocument.components.headers as Record<string, { required: boolean }>)[componentName]?.required
      : declaration.required === true;
    const value = byLowerName.get(name.toLowerCase());
    if (value === undefined) {
      if (required) issues.push({ path: name, message: `missing header ${name}` });
      continue;
    }
    if (Array.isArray(value) && value.length !== 1) {
      issues.push({ path: name, message: `header ${name} must appear once` });
      continue;
    }
    const validate = validatorAt([...at, 'schema']);
    if (!validate(Array.isArray(value) ? value[0] : value)) {
      const subject = `header ${name}`;
      for (const issue of toIssues(validate.errors, subject)) issues.push({ path: name, message: issue.message });
    }
  }
  return issues;
}

/** Turns `/events/0/body` into `events[0].body`. */
function dotted(instancePath: string, child?: string): string {
  const segments = instancePath
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (child !== undefined) segments.push(child);
  return segments.reduce((out, segment) => {
    if (/^[0-9]+$/.test(segment)) return `${out}[${segment}]`;
    return out ? `${out}.${segment}` : segment;
  }, '');
}

function toIssues(errors: ErrorObject[] | null | undefined, root = 'body'): SchemaIssue[] {
  const all = errors ?? [];
  // Combinators restate what their branches already said; keep them only when nothing else spoke.
  const specific = all.filter((error) => !['anyOf', 'oneOf', 'if', 'allOf'].includes(error.keyword));
  const issues: SchemaIssue[] = [];
  const seen = new Set<string>();
  for (const error of specific.length > 0 ? specific : all) {
    const issue = toIssue(error, root);
    if (seen.has(issue.message)) continue;
    seen.add(issue.message);
    issues.push(issue);
  }
  return issues;
}

function toIssue(error: ErrorObject, root: string): SchemaIssue {
  const path = dotted(error.instancePath);
  const subject = path || root;
  const params = error.params as Record<string, unknown>;
  const custom = (error.parentSchema as JsonSchema | undefined)?.['x-error'];
  if (typeof custom === 'string') return { path, message: custom };
  switch (error.keyword) {
    case 'required': {
      const where = dotted(error.instancePath, String(params.missingProperty));
      return { path: where, message: `${where} is required` };
    }
    case 'additionalProperties':
    case CLOSED_KEYWORD: {
      const where = dotted(error.instancePath, String(params.additionalProperty));
      return { path: where, message: `unknown property '${where}'` };
    }
    case 'type':
      return { path, message: `${subject} must be ${String(params.type).split(',').join(' or ')}` };
    case 'enum': {
      const allowed = (params.allowedValues as unknown[]).map((value) => (value === null ? 'null' : String(value)));
      return { path, message: `${subject} must be one of ${allowed.join(', ')}` };
    }
    case 'const':
      return { path, message: `${subject} must be ${JSON.stringify(params.allowedValue)}` };
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return { path, message: `${subject} must be ${String(params.comparison)} ${String(params.limit)}` };
    case 'minLength':
      if (params.limit === 1) return { path, message: `${subject} must not be empty` };
      return { path, message: `${subject} must be at least ${String(params.limit)} characters` };
    case 'maxLength':
      return { path, message: `${subject} must be at most ${String(params.limit)} characters` };
    case 'minItems':
      return { path, message: `${subject} must have at least ${String(params.limit)} items` };
    case 'maxItems':
      return { path, message: `${subject} must have at most ${String(params.limit)} items` };
    case 'pattern': {
      const words = PATTERN_WORDS[String(params.pattern)] ?? `text matching ${String(params.pattern)}`;
      return { path, message: `${subject} must be ${words}` };
    }
    default:
      return { path, message: `${subject} ${error.message ?? 'is invalid'}` };
  }
}
