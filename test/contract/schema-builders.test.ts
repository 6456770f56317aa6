// The wire types are Static<> of the document's schemas (src/contract/types.ts). TypeBox works the
// type out for everything but the builders that declare one by hand with Type.Unsafe, because the
// document spells those its own way (`type: [t, 'null']`, `type` beside `enum`, a $ref by name).
// Each of those is checked both ways here: its declared type (by the type checker, through
// expectTypeOf) and what its schema accepts and refuses (by ajv), so the two cannot disagree.
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { Static, TSchema } from 'typebox';
import { describe, expect, expectTypeOf, test } from 'vitest';
import { openapiDocument } from '../../src/contract/openapi.js';
import { LinkItem } from '../../src/contract/schemas-work-items.js';
import { Design } from '../../src/contract/schemas-resources.js';
import {
  anyObject,
  anyObjectOrNull,
  dateTimeOrNull,
  enumOf,
  enumOrNull,
  intOrNull,
  keyOrNull,
  numOrNull,
  openEnumOf,
  openEnumOrNull,
  openObject,
  ref,
  refOrNull,
  strOrNull,
} from '../../src/contract/schemas-shared.js';
import type { Open } from '../../src/contract/types.js';
import * as Type from 'typebox/type';

const ajv = new Ajv2020({ strict: false });
const abc = ['a', 'b', 'c'] as const;
type Abc = (typeof abc)[number];

// [builder, values its type allows (the schema must accept them), values outside it (must be refused)]
const ROWS: [string, TSchema, unknown[], unknown[]][] = [
  ['strOrNull', strOrNull, ['', 'x', null], [1, {}, undefined]],
  ['intOrNull', intOrNull, [0, -3, null], [1.5, '1', {}]],
  ['numOrNull', numOrNull, [0, 1.5, null], ['1', true]],
  ['keyOrNull', keyOrNull, ['APP-1', null], ['app-1', 1]],
  ['dateTimeOrNull', dateTimeOrNull, ['2026-01-02T03:04Z', null], ['2026-01-02', 0]],
  ['anyObject', anyObject, [{}, { a: 1 }], [null, [], 'x']],
  ['anyObjectOrNull', anyObjectOrNull, [{ a: 1 }, null], [[], 'x']],
  ['Design', Design, [{ id: 'd1' }], [null, 'x']],
  ['enumOf', enumOf(abc), ['a', 'c'], ['d', null, 1]],
  ['enumOrNull', enumOrNull(abc), ['b', null], ['d', 1]],
  // Open in the type (any string), the known values in the document: the local service emits no other.
  ['openEnumOf', openEnumOf(abc), ['a'], ['d', null]],
  ['openEnumOrNull', openEnumOrNull(abc), ['a', null], ['d', 1]],
  ['openObject', openObject({ ok: Type.Boolean() }), [{ ok: true }, { ok: false, more: 1 }], [{}, { ok: 'yes' }, null]],
];

describe('builders with a declared type: the schema agrees with it', () => {
  test.each(ROWS)('%s', (_name, schema, allowed, refused) => {
    const validate = ajv.compile(schema);
    for (const value of allowed) expect(validate(value), JSON.stringify(value)).toBe(true);
    for (const value of refused) expect(validate(value), JSON.stringify(value) ?? 'undefined').toBe(false);
  });

  test('their declared types', () => {
    expectTypeOf<Static<typeof strOrNull>>().toEqualTypeOf<string | null>();
    expectTypeOf<Static<typeof intOrNull>>().toEqualTypeOf<number | null>();
    expectTypeOf<Static<typeof numOrNull>>().toEqualTypeOf<number | null>();
    expectTypeOf<Static<typeof keyOrNull>>().toEqualTypeOf<string | null>();
    expectTypeOf<Static<typeof dateTimeOrNull>>().toEqualTypeOf<string | null>();
    expectTypeOf<Static<typeof anyObject>>().toEqualTypeOf<Record<string, unknown>>();
    expectTypeOf<Static<typeof anyObjectOrNull>>().toEqualTypeOf<Record<string, unknown> | null>();
    expectTypeOf<Static<typeof Design>>().toEqualTypeOf<Record<string, unknown>>();
    expectTypeOf<Static<ReturnType<typeof enumOf<typeof abc>>>>().toEqualTypeOf<Abc>();
    expectTypeOf<Static<ReturnType<typeof enumOrNull<typeof abc>>>>().toEqualTypeOf<Abc | null>();
    expectTypeOf<Static<ReturnType<typeof openEnumOf<typeof abc>>>>().toEqualTypeOf<Open<Abc>>();
    expectTypeOf<Static<ReturnType<typeof openEnumOrNull<typeof abc>>>>().toEqualTypeOf<Open<Abc> | null>();
    const open = openObject({ ok: Type.Boolean() });
    expectTypeOf<Static<typeof open>>().toEqualTypeOf<{ ok: boolean } & { [extra: string]: unknown }>();
  });

  test('ref: the $ref names the component whose type it carries, and that component is the same schema', () => {
    const linkRef = ref({ LinkItem });
    expect(linkRef).toEqual({ $ref: '#/components/schemas/LinkItem' });
    expect(openapiDocument.components.schemas.LinkItem).toBe(LinkItem);
    expectTypeOf<Static<typeof linkRef>>().toEqualTypeOf<Static<typeof LinkItem>>();
    const orNull = refOrNull({ LinkItem });
    expect(orNull).toEqual({ anyOf: [{ $ref: '#/components/schemas/LinkItem' }, { type: 'null' }] });
    expectTypeOf<Static<typeof orNull>>().toEqualTypeOf<Static<typeof LinkItem> | null>();
  });
});
