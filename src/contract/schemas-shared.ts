// Building blocks of the OpenAPI document's JSON Schemas (draft 2020-12, as OpenAPI 3.1 uses).
// Kept as plain data so the document stays JSON-serialisable and cheap to build.
import { KEY_PATTERN } from './types.js';

/** A JSON Schema object as it appears in the document. */
export type JsonSchema = { [keyword: string]: unknown };

/** Marks a response schema the local service keeps closed: see `closed` below. */
export const CLOSED_KEYWORD = 'x-svc-closed';

/** api-v1 §2: UTC, ending in `Z`, seconds optional, fractional seconds allowed. */
export const DATE_TIME_PATTERN =
  '^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\\.[0-9]+)?)?Z$';

export const KEY_PATTERN_SOURCE = KEY_PATTERN.source;

export const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });

export const str: JsonSchema = { type: 'string' };
export const strOrNull: JsonSchema = { type: ['string', 'null'] };
export const bool: JsonSchema = { type: 'boolean' };
export const int: JsonSchema = { type: 'integer' };
export const intOrNull: JsonSchema = { type: ['integer', 'null'] };
export const numOrNull: JsonSchema = { type: ['number', 'null'] };
export const strArray: JsonSchema = { type: 'array', items: str };
export const dateTime: JsonSchema = { type: 'string', pattern: DATE_TIME_PATTERN };
export const dateTimeOrNull: JsonSchema = { type: ['string', 'null'], pattern: DATE_TIME_PATTERN };
export const key: JsonSchema = { type: 'string', pattern: KEY_PATTERN_SOURCE };
export const keyOrNull: JsonSchema = { type: ['string', 'null'], pattern: KEY_PATTERN_SOURCE };
export const keyArray: JsonSchema = { type: 'array', items: key };
/** A shape the contract leaves open ("not shown"): any object. */
export const anyObject: JsonSchema = { type: 'object' };
export const anyObjectOrNull: JsonSchema = { type: ['object', 'null'] };

export const enumOf = (values: readonly string[]): JsonSchema => ({ type: 'string', enum: [...values] });
export const enumOrNull = (values: readonly string[]): JsonSchema => ({
  type: ['string', 'null'],
  enum: [...values, null],
});
export const arrayOf = (items: JsonSchema, extra: JsonSchema = {}): JsonSchema => ({ type: 'array', items, ...extra });
export const refOrNull = (name: string): JsonSchema => ({ anyOf: [ref(name), { type: 'null' }] });

interface ObjectOptions {
  /** Properties that may be absent; every other listed property is required. */
  optional?: readonly string[];
  /** Request bodies: unknown properties are rejected (api-v1 §2, docs/service.md). */
  strict?: boolean;
  /**
   * Responses: the document stays open (the contract is additive and clients must tolerate unknown
   * fields), but the local service promises to emit nothing else, so its own response check
   * rejects extra properties through this vendor keyword. That catches internal columns or
   * misspelt fields leaking out of the server, which `required` alone would not.
   */
  closed?: boolean;
  description?: string;
}

export function object(properties: Record<string, JsonSchema>, opts: ObjectOptions = {}): JsonSchema {
  const optional = new Set(opts.optional ?? []);
  const schema: JsonSchema = {
    type: 'object',
    required: Object.keys(properties).filter((name) => !optional.has(name)),
    properties,
  };
  if (opts.description) schema.description = opts.description;
  if (opts.strict) schema.additionalProperties = false;
  if (opts.closed) schema[CLOSED_KEYWORD] = true;
  return schema;
}
