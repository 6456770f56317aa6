// The store's schema as numbered migrations keyed on `PRAGMA user_version`. A database records the
// last migration it has run; at open, the ones after it run in one transaction, so a store is
// either wholly on the old schema or wholly on the new one. Add a change as one more entry at the
// end, never by editing an entry a released build has run (its databases would never see it).
import type { DatabaseSync } from 'node:sqlite';
import { HOSTED_RUNNERS_SCHEMA } from './hosted-executor/schema.js';
import { CORE_SCHEMA, PROJECT_MEMBERS_SCHEMA } from './schema-core.js';

export interface Migration {
  version: number;
  name: string;
  /** DDL (and data fixes) to bring a store from `version - 1` to `version`. */
  sql: string;
}

/**
 * Migration 1 is the schema every build before migrations made (`CREATE TABLE IF NOT EXISTS` at
 * each start): the core tables plus each module's own. Its DDL stays idempotent so a database of
 * those builds can be adopted by running it again (see `adopt` below).
 */
export function migrations(moduleSchemas: readonly string[]): Migration[] {
  return [
    {
      version: 1,
      name: 'the schema of the builds before migrations',
      sql: [CORE_SCHEMA, PROJECT_MEMBERS_SCHEMA, ...moduleSchemas.filter((s) => s.trim())].join('\n'),
    },
    { version: 2, name: 'the runner a hosted executor started for each hosted run', sql: HOSTED_RUNNERS_SCHEMA },
  ];
}

/** A store from a newer build: its tables may mean things this build does not know, so it is not opened. */
export class NewerDatabaseError extends Error {
  constructor(
    readonly file: string,
    readonly found: number,
    readonly known: number,
  ) {
    super(`the database ${file} was made by a newer svc (schema ${found}, this build knows ${known})`);
  }
}

const userVersion = (db: DatabaseSync): number => (db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version;

/**
 * Brings `db` to the newest migration. A store made before migrations existed has user_version 0
 * but already holds tables: migration 1 runs over it (every statement is IF NOT EXISTS, so it only
 * fills what an older build lacked) and stamps it, the same path as an empty store.
 */
export function migrate(db: DatabaseSync, file: string, list: readonly Migration[]): { from: number; to: number; adopted: boolean } {
  const known = list.length ? list[list.length - 1]!.version : 0;
  // BEGIN IMMEDIATE: two processes opening one new file must not both run migration 1's DDL.
  db.exec('BEGIN IMMEDIATE');
  try {
    const from = userVersion(db);
    if (from > known) throw new NewerDatabaseError(file, from, known);
    const adopted = from === 0 && db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name IN ('meta', 'work_items') LIMIT 1").get() !== undefined;
    for (const m of list) {
      if (m.version <= from) continue;
      db.exec(m.sql);
      // PRAGMA takes no bound parameters; the version is an integer of ours, never input.
      db.exec(`PRAGMA user_version = ${Math.trunc(m.version)}`);
    }
    db.exec('COMMIT');
    return { from, to: Math.max(from, known), adopted };
  } catch (err) {
    db.exec('ROLLBACK');
    throw err;
  }
}
