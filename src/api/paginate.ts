// Walking a cursor-paged collection. The caller closes over the operation and its filters and we
// only thread `cursor` through, so one helper serves every paged operation:
//   for await (const item of paginate((cursor) => api.listWorkItems('ABC', { filter, cursor, limit: 100 })))
import type { Page } from '../contract/types.js';

export type FetchPage<T> = (cursor: string | undefined) => Promise<Page<T>>;

export interface PaginateOptions {
  /** Stop after this many items in total (the last page is cut). */
  maxItems?: number;
}

/** Yields every page in order, following `nextCursor` until it is null. */
export async function* paginatePages<T>(fetchPage: FetchPage<T>): AsyncGenerator<Page<T>, void, undefined> {
  let cursor: string | undefined;
  const seen = new Set<string>();
  for (;;) {
    const page = await fetchPage(cursor);
    yield page;
    const next = page.nextCursor;
    if (next === null || next === undefined || next === '') return;
    // A service that hands back a cursor it already gave would make this loop forever.
    if (seen.has(next)) throw new Error(`paging did not advance: the service repeated a cursor`);
    seen.add(next);
    cursor = next;
  }
}

/** Yields every item of every page, in order; stops early at `maxItems` without fetching more. */
export async function* paginate<T>(fetchPage: FetchPage<T>, opts: PaginateOptions = {}): AsyncGenerator<T, void, undefined> {
  const max = opts.maxItems ?? Number.POSITIVE_INFINITY;
  if (max <= 0) return;
  let count = 0;
  for await (const page of paginatePages(fetchPage)) {
    for (const item of page.items) {
      yield item;
      if (++count >= max) return;
    }
  }
}

/** Collects `paginate` into an array (for `--json` output of a whole collection). */
export async function collectAll<T>(fetchPage: FetchPage<T>, opts: PaginateOptions = {}): Promise<T[]> {
  const out: T[] = [];
  for await (const item of paginate(fetchPage, opts)) out.push(item);
  return out;
}
