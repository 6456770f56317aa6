// Opens the local service's SQLite store through node:sqlite (built into Node 22: no native build).
// node:sqlite prints an ExperimentalWarning when it loads; a CLI that prints that on every
// `svc server` looks broken, so exactly that one warning is filtered. Every other warning still
// reaches process.emitWarning's default printer.
import { createRequire } from 'node:module';
import { chmodSync, closeSync, openSync, statSync } from 'node:fs';
import type { DatabaseSync as DatabaseSyncType, StatementSync } from 'node:sqlite';
import { trackReadyChanges } from './ready/changes.js';
import { migrate, migrations } from './migrations.js';
import type { ServiceModule } from './kernel.js';

const isSqliteWarning = (warning: unknown, type: unknown): boolean => {
  const name = warning instanceof Error ? warning.name : typeof type === 'string' ? type : undefined;
  const text = warning instanceof Error ? warning.message : String(warning);
  return name === 'ExperimentalWarning' && /SQLite/i.test(text);
};

function loadSqlite(): typeof import('node:sqlite') {
  const original = process.emitWarning;
  // The signature is overloaded; forwarding `arguments` keeps every overload intact.
  process.emitWarning = function (this: unknown, warning: string | Error, ...rest: unknown[]) {
    const opts = rest[0];
    const type = typeof opts === 'object' && opts !== null ? (opts as { type?: string }).type : opts;
    if (isSqliteWarning(warning, type)) return;
    return (original as (...a: unknown[]) => void).call(process, warning, ...rest);
  } as typeof process.emitWarning;
  try {
    return createRequire(import.meta.url)('node:sqlite') as typeof import('node:sqlite');
  } finally {
    // The warning is emitted synchronously while the module loads, so the filter can go now.
    process.emitWarning = original;
  }
}

const sqlite = loadSqlite();
export type Database = DatabaseSyncType;

/**
 * The store holds every item, stored log and token hash: its owner's alone (0600). SQLite makes
 * the -wal and -shm files with the database file's mode, so the file is made 0600 before SQLite
 * opens it; one left 0644 by an older build is tightened, with its companions, when it is ours.
 */
function keepPrivate(file: string): void {
  closeSync(openSync(file, 'a', 0o600));
  for (const path of [file, `${file}-wal`, `${file}-shm`]) {
    try {
      const st = statSync(path);
      if ((st.mode & 0o077) !== 0 && st.uid === process.getuid?.()) chmodSync(path, st.mode & 0o700);
    } catch {
      // No such companion yet: SQLite makes it with the database file's mode.
    }
  }
}

/**
 * Opens (or creates) the store and runs the migrations it has not run yet (migrations.ts); throws
 * NewerDatabaseError, with the store untouched, for one made by a newer build.
 */
export function openDatabase(file: string, modules: readonly ServiceModule[]): Database {
  if (file !== ':memory:') keepPrivate(file);
  const db = new sqlite.DatabaseSync(file);
  if (file !== ':memory:') db.exec('PRAGMA journal_mode = WAL');
  db.exec('PRAGMA foreign_keys = ON');
  // Several processes (a spawned `svc server` and a `svc server token create`) may share a file.
  db.exec('PRAGMA busy_timeout = 5000');
  try {
    migrate(db, file, migrations(modules.map((m) => m.schema)));
  } catch (err) {
    db.close();
    throw err;
  }
  trackReadyChanges(db);
  cachePrepared(db);
  return db;
}

// Distinct SQL texts kept compiled per database; the texts with a list of `?`s vary with its length.
const PREPARED_MAX = 1000;

/**
 * node:sqlite compiles a statement on every `prepare` (25 µs for a one-table lookup, more for the
 * ready listing's joins), and the service prepares where it queries, a dozen times a request: each
 * SQL text is compiled once per open database instead. Sharing a statement is safe because every
 * use runs it to its end (get, all, run; nothing in the service holds an `iterate()` open) and
 * none changes its settings. Full, the cache starts over.
 */
function cachePrepared(db: Database): void {
  const prepare = db.prepare.bind(db);
  const cache = new Map<string, StatementSync>();
  db.prepare = (sql: string): StatementSync => {
    let statement = cache.get(sql);
    if (!statement) {
      if (cache.size >= PREPARED_MAX) cache.clear();
      statement = prepare(sql);
      cache.set(sql, statement);
    }
    return statement;
  };
}

const inTransaction = new WeakSet<Database>();

/**
 * Runs `fn` inside BEGIN IMMEDIATE … COMMIT (ROLLBACK on throw). A nested call joins the outer
 * transaction, so helpers can be composed without knowing who opened it.
 */
export function transaction<T>(db: Database, fn: () => T): T {
  if (inTransaction.has(db)) return fn();
  db.exec('BEGIN IMMEDIATE');
  inTransaction.add(db);
  try {
    const result = fn();
    db.exec('COMMIT');
    return result;
  } catch (err) {
    db.exec('ROLLBACK');
    throw err;
  } finally {
    inTransaction.delete(db);
  }
}

/** Reads a `meta` value, creating it with `make()` on first use. */
export function metaValue(db: Database, name: string, make: () => string): string {
  const row = db.prepare('SELECT value FROM meta WHERE name = ?').get(name) as { value: string } | undefined;
  if (row) return row.value;
  db.prepare('INSERT OR IGNORE INTO meta (name, value) VALUES (?, ?)').run(name, make());
  return (db.prepare('SELECT value FROM meta WHERE name = ?').get(name) as { value: string }).value;
}
