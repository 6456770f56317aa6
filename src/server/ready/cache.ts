// The ready lanes' cache: a lane's whole computed list (before paging) per project and exact
// parameters, kept while nothing readiness is computed from has changed. Computing the ready set
// of a project walks all of it (~100 ms at 50,000 items); a page of a cached list costs ~1 ms.
//
// The version (schema-core.ts READY_VERSION_SCHEMA) is this connection's write counter, bumped by
// TEMP triggers on every write to work items, links and sprints whoever makes it, plus
// `PRAGMA data_version`, which moves when another connection commits. A lane answer is therefore
// never older than the store: any such write, through a route, the admin API, another module or
// raw SQL, makes the next request compute afresh.
import type { StatementSync } from 'node:sqlite';
import type { Database } from '../db.js';

/** Lists kept per database (least recently used dropped first). */
const MAX_ENTRIES = 32;
/**
 * The service never ran ANALYZE, so SQLite guessed `project_id = ?` selective and walked whole
 * projects. On a miss, after this many writes since the last time, SQLite's statistics are
 * refreshed (`PRAGMA optimize` over sampled rows: ~2 ms at 50,000 items), which halves the first
 * ready/bugs request after a write (~65 → ~30 ms). Small stores (tests) never reach it.
 */
const OPTIMIZE_EVERY_WRITES = 1000;

interface Entry {
  version: string;
  value: unknown;
}
interface PerDb {
  entries: Map<string, Entry>;
  /** This connection's write counter when statistics were last refreshed. */
  optimizedAt: number;
  counter: StatementSync | null;
  dataVersion: StatementSync;
}
const perDb = new WeakMap<Database, PerDb>();

function stateOf(db: Database): PerDb {
  let s = perDb.get(db);
  if (!s) {
    let counter: StatementSync | null = null;
    try {
      counter = db.prepare('SELECT v FROM temp.ready_version WHERE id = 1');
    } catch {
      // A store not opened through openDatabase has no counter: nothing is cached for it.
    }
    s = { entries: new Map(), optimizedAt: 0, counter, dataVersion: db.prepare('PRAGMA data_version') };
    perDb.set(db, s);
  }
  return s;
}

/** The current version, or null when answers must not be cached (no counter; inside a transaction,
 * whose writes may yet roll back and take the counter back with them). */
function versionOf(db: Database, s: PerDb): { key: string; writes: number } | null {
  if (!s.counter || db.isTransaction) return null;
  const own = s.counter.get() as { v: number } | undefined;
  if (!own) return null;
  const others = s.dataVersion.get() as { data_version: number };
  return { key: `${own.v}:${others.data_version}`, writes: own.v };
}

/** `compute()`'s answer for `key`, reused while the store's readiness version is unchanged. */
export function cachedLane<T>(db: Database, key: string, compute: () => T): T {
  const s = stateOf(db);
  const version = versionOf(db, s);
  if (version === null) return compute();
  const hit = s.entries.get(key);
  if (hit) {
    s.entries.delete(key);
    if (hit.version === version.key) {
      s.entries.set(key, hit);
      return hit.value as T;
    }
  }
  if (version.writes - s.optimizedAt >= OPTIMIZE_EVERY_WRITES) {
    s.optimizedAt = version.writes;
    try {
      db.exec('PRAGMA analysis_limit = 400; PRAGMA optimize = 0x10002');
    } catch {
      // Statistics are an optimisation only (a busy store may refuse the write): answer anyway.
    }
  }
  const value = compute();
  s.entries.set(key, { version: version.key, value });
  while (s.entries.size > MAX_ENTRIES) s.entries.delete(s.entries.keys().next().value!);
  return value;
}
