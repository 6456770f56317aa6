// Building blocks of the OpenAPI document's JSON Schemas (draft 2020-12, as OpenAPI 3.1 uses),
// written with TypeBox so each schema carries its TypeScript type (./types.ts reads them with
// Static<>). TypeBox keeps its own marks in non-enumerable properties, so every schema is plain
// JSON Schema to JSON.stringify, ajv and the served document. Only the server and the tests load
// these modules: the CLI imports ./types.ts, whose imports of them are type-only.
import * as Type from 'typebox/type';
import type { Static, TObject, TProperties, TSchema, TUnsafe } from 'typebox';
import { KEY_PATTERN, type Open } from './types.js';

/** A JSON Schema object as it appears in the document. */
export type JsonSchema = { [keyword: string]: unknown };

/** Marks a response schema the local service keeps closed: see `closed` below. */
export const CLOSED_KEYWORD = 'x-svc-closed';

/** the contract's fields: UTC, ending in `Z`, seconds optional, fractional seconds allowed. */
export const DATE_TIME_PATTERN = '^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\\.[0-9]+)?)?Z$';

export const KEY_PATTERN_SOURCE = KEY_PATTERN.source;

/**
 * Responses: the document stays open (the contract is additive and clients must tolerate unknown
 * fields), but the local service promises to emit nothing else, so its own response check
 * rejects extra properties through this vendor keyword. That catches internal columns or
 * misspelt fields leaking out of the server, which `required` alone would not.
 */
export const closed = (description?: string): JsonSchema => (description ? { description, [CLOSED_KEYWORD]: true } : { [CLOSED_KEYWORD]: true });

/** Request bodies: unknown properties are rejected (the contract's fields, docs/service.md). */
export const STRICT = { additionalProperties: false } as const;

/** The TypeScript type of each JSON type name the document uses. */
interface JsonTypes {
  string: string;
  integer: number;
  number: number;
  object: Record<string, unknown>;
}

/**
 * A nullable value spelt the document's way, `type: [t, 'null']` (TypeBox would write an anyOf,
 * which reads and reports worse); its type follows from the JSON type's name.
 */
export const orNull = <K extends keyof JsonTypes>(type: K, extra: JsonSchema = {}): TUnsafe<JsonTypes[K] | null> =>
  Type.Unsafe<JsonTypes[K] | null>({ type: [type, 'null'], ...extra });

/**
 * A string enum, with `type` beside `enum` as the document has always said it. Request bodies
 * use it: the service refuses what it does not know.
 */
export const enumOf = <const V extends readonly string[]>(values: V, extra: JsonSchema = {}): TUnsafe<V[number]> =>
  Type.Unsafe<V[number]>({ type: 'string', enum: [...values], ...extra });

/**
 * A response enum: the document lists the values this service emits, and the type stays open
 * (`Open<T>`) because the contract is additive and a client must carry an unknown value through.
 */
export const openEnumOf = <const V extends readonly string[]>(values: V, extra: JsonSchema = {}): TUnsafe<Open<V[number]>> =>
  Type.Unsafe<Open<V[number]>>({ type: 'string', enum: [...values], ...extra });

export const enumOrNull = <const V extends readonly string[]>(values: V): TUnsafe<V[number] | null> =>
  Type.Unsafe<V[number] | null>({ type: ['string', 'null'], enum: [...values, null] });

export const openEnumOrNull = <const V extends readonly string[]>(values: V): TUnsafe<Open<V[number]> | null> =>
  Type.Unsafe<Open<V[number]> | null>({ type: ['string', 'null'], enum: [...values, null] });

/**
 * A reference to a component schema, typed as its target: `ref({ LinkItem })` (the property's
 * name is the component's, so the name and the schema cannot disagree).
 */
export function ref<T extends TSchema>(named: Record<string, T>): TUnsafe<Static<T>> {
  const [name] = Object.keys(named);
  return Type.Unsafe<Static<T>>({ $ref: `#/components/schemas/${name}` });
}

export const refOrNull = <T extends TSchema>(named: Record<string, T>) => Type.Union([ref(named), Type.Null()]);

/**
 * An object whose shape the contract leaves open: the named fields, and any others (the document
 * does not close it, and the type says so with an index signature).
 */
export const openObject = <P extends TProperties>(properties: P, options: JsonSchema = {}) =>
  Type.Unsafe<Static<TObject<P>> & { [extra: string]: unknown }>(Type.Object(properties, options));

export const str = Type.String();
export const strOrNull = orNull('string');
export const bool = Type.Boolean();
export const int = Type.Integer();
export const intOrNull = orNull('integer');
/** A count or sequence number. */
export const count = Type.Integer({ minimum: 0 });
export const numOrNull = orNull('number');
export const strArray = Type.Array(str);
export const nonEmpty = Type.String({ minLength: 1 });
export const dateTime = Type.String({ pattern: DATE_TIME_PATTERN });
export const dateTimeOrNull = orNull('string', { pattern: DATE_TIME_PATTERN });
export const key = Type.String({ pattern: KEY_PATTERN_SOURCE });
export const keyOrNull = orNull('string', { pattern: KEY_PATTERN_SOURCE });
export const keyArray = Type.Array(key);
/** A shape the contract leaves open ("not shown"): any object. */
export const anyObject = Type.Unsafe<Record<string, unknown>>({ type: 'object' });
export const anyObjectOrNull = orNull('object');
