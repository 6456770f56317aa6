// Paging cursors (docs/service.md): base64url JSON `{c: collection, o: offset}` plus an
// HMAC-SHA256 tag keyed by a per-database secret. Scoping by collection makes a cursor of
// another list a 422 instead of a silent reset; the tag makes a forged offset a 422 too.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { invalid, type CursorCodec } from './kernel.js';
import { metaValue, type Database } from './db.js';
import { PAGE_DEFAULT, PAGE_MAX } from '../contract/types.js';

export function createCursorCodec(secret: string): CursorCodec {
  const tag = (payload: string) => createHmac('sha256', secret).update(payload).digest('base64url');
  return {
    encode(collection, offset) {
      const payload = Buffer.from(JSON.stringify({ c: collection, o: offset })).toString('base64url');
      return `${payload}.${tag(payload)}`;
    },
    decode(collection, cursor) {
      const [payload, sig, ...rest] = cursor.split('.');
      if (!payload || !sig || rest.length > 0) throw invalid('cursor is not a valid cursor');
      const expected = Buffer.from(tag(payload));
      const given = Buffer.from(sig);
      if (expected.length !== given.length || !timingSafeEqual(expected, given)) {
        throw invalid('cursor is not a valid cursor (bad signature)');
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
      } catch {
        throw invalid('cursor is not a valid cursor');
      }
      const { c, o } = (parsed ?? {}) as { c?: unknown; o?: unknown };
      if (c !== collection) throw invalid('cursor belongs to another collection');
      if (typeof o !== 'number' || !Number.isSafeInteger(o) || o < 0) throw invalid('cursor is not a valid cursor');
      return o;
    },
  };
}

/** The codec of one database: its secret is created once and kept in `meta`. */
export function cursorCodecFor(db: Database): CursorCodec {
  return createCursorCodec(metaValue(db, 'cursor_secret', () => randomBytes(32).toString('hex')));
}

/** The validated paging parameters of a request: page size and the offset the cursor names. */
export interface PageRequest {
  limit: number;
  offset: number;
  collection: string;
}

/**
 * Reads `limit` and `cursor` (api-v1 paging parameters): limit defaults to 50, is clamped to 100,
 * and anything that is not a positive integer is a 422.
 */
export function readPaging(query: URLSearchParams, codec: CursorCodec, collection: string): PageRequest {
  const rawLimit = query.get('limit');
  let limit = PAGE_DEFAULT;
  if (rawLimit !== null) {
    if (!/^[+-]?\d+$/.test(rawLimit.trim())) throw invalid(`limit must be a positive integer, got '${rawLimit}'`);
    const n = Number(rawLimit);
    if (n <= 0) throw invalid(`limit must be greater than 0, got ${rawLimit}`);
    limit = Math.min(n, PAGE_MAX);
  }
  const rawCursor = query.get('cursor');
  const offset = rawCursor === null || rawCursor === '' ? 0 : codec.decode(collection, rawCursor);
  return { limit, offset, collection };
}

/** Builds a page from rows fetched with LIMIT limit+1 at the request's offset. */
export function pageOf<T>(rows: T[], req: PageRequest, codec: CursorCodec): { items: T[]; nextCursor: string | null } {
  const more = rows.length > req.limit;
  return {
    items: more ? rows.slice(0, req.limit) : rows,
    nextCursor: more ? codec.encode(req.collection, req.offset + req.limit) : null,
  };
}

/** Builds a page from a whole list computed in memory, in its order. */
export function pageOfList<T>(all: readonly T[], req: PageRequest, codec: CursorCodec): { items: T[]; nextCursor: string | null } {
  return pageOf(all.slice(req.offset, req.offset + req.limit + 1), req, codec);
}
