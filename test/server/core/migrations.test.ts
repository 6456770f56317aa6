// The store's schema is versioned (PRAGMA user_version): a database made before migrations existed
// is adopted with its rows, a new one is stamped, and one from a newer build is refused untouched.
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { expect, test } from 'vitest';
import { openDatabase } from '../../../src/server/db.js';
import { migrations, NewerDatabaseError } from '../../../src/server/migrations.js';
import { MODULES } from '../../../src/server/modules.js';

const file = () => join(mkdtempSync(join(tmpdir(), 'svc-mig-')), 'svc.db');
const version = (db: DatabaseSync) => (db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version;
const tables = (db: DatabaseSync) =>
  (db.prepare("SELECT name FROM sqlite_schema WHERE type IN ('table', 'index') AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as { name: string }[]).map(
    (r) => r.name,
  );

// An older build's store, with the DDL such a build ran (CREATE TABLE IF NOT EXISTS at start, no
// user_version): the plain parent index the newer composite one replaced, and no project_members.
const OLD_DDL = `
CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE workspaces (id TEXT PRIMARY KEY, name TEXT NOT NULL, slug TEXT NOT NULL UNIQUE, created_at TEXT NOT NULL);
CREATE TABLE users (id TEXT PRIMARY KEY, name TEXT NOT NULL, email TEXT NOT NULL UNIQUE);
CREATE TABLE projects (
  id TEXT PRIMARY KEY, workspace_id TEXT NOT NULL REFERENCES workspaces(id), key TEXT NOT NULL,
  name TEXT NOT NULL, access_mode TEXT NOT NULL DEFAULT 'workspace', archived INTEGER NOT NULL DEFAULT 0,
  next_number INTEGER NOT NULL DEFAULT 1, UNIQUE (workspace_id, key));
CREATE TABLE work_items (
  id TEXT PRIMARY KEY, project_id TEXT NOT NULL REFERENCES projects(id), number INTEGER NOT NULL,
  key TEXT NOT NULL, kind TEXT NOT NULL, type TEXT, title TEXT NOT NULL, description_md TEXT,
  status TEXT NOT NULL DEFAULT 'todo', priority TEXT NOT NULL DEFAULT 'medium',
  parent_id TEXT REFERENCES work_items(id), assignee_id TEXT, reporter_id TEXT NOT NULL,
  due_date TEXT, estimate_minutes INTEGER, story_points REAL, executor TEXT,
  sprint_id TEXT, folder_id TEXT, rank TEXT, target_repo TEXT,
  target_repos TEXT NOT NULL DEFAULT '[]', target_repositories TEXT NOT NULL DEFAULT '[]',
  labels TEXT NOT NULL DEFAULT '[]', components TEXT NOT NULL DEFAULT '[]',
  deliveries TEXT NOT NULL DEFAULT '[]', extra TEXT NOT NULL DEFAULT '{}',
  comment_count INTEGER NOT NULL DEFAULT 0, version INTEGER NOT NULL DEFAULT 1,
  archived_at TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL, UNIQUE (project_id, number));
CREATE INDEX work_items_by_parent ON work_items (parent_id);
INSERT INTO meta VALUES ('seeded', 'yes');
INSERT INTO workspaces VALUES ('w1', 'Acme', 'acme', '2025-01-01T00:00:00Z');
INSERT INTO users VALUES ('u1', 'Ada', 'ada@example.com');
INSERT INTO projects (id, workspace_id, key, name, next_number) VALUES ('p1', 'w1', 'ACME', 'Acme', 2);
INSERT INTO work_items (id, project_id, number, key, kind, title, reporter_id, created_at, updated_at)
  VALUES ('i1', 'p1', 1, 'ACME-1', 'task', 'Kept across the upgrade', 'u1', '2025-01-01T00:00:00Z', '2025-01-01T00:00:00Z');
`;

test('a store made before migrations is adopted: rows kept, missing tables made, old index replaced, stamped', () => {
  const path = file();
  const old = new DatabaseSync(path);
  old.exec(OLD_DDL);
  old.close();

  const db = openDatabase(path, MODULES);
  const latest = migrations([]).at(-1)!.version;
  expect(version(db)).toBe(latest);
  expect(db.prepare('SELECT title FROM work_items WHERE key = ?').get('ACME-1')).toEqual({ title: 'Kept across the upgrade' });
  expect(tables(db)).toEqual(expect.arrayContaining(['project_members', 'dispatch_runs', 'work_items_by_live_parent', 'plans']));
  expect(tables(db)).not.toContain('work_items_by_parent');
  db.close();

  // Opening again runs nothing: the stamp holds and nothing is re-created or lost.
  const again = openDatabase(path, MODULES);
  expect(version(again)).toBe(latest);
  expect((again.prepare('SELECT count(*) AS n FROM work_items').get() as { n: number }).n).toBe(1);
  again.close();
});

test('a store made by the last build before migrations keeps its exact schema and is only stamped', () => {
  const path = file();
  const pre = new DatabaseSync(path);
  // What that build ran at every start: the same DDL as migration 1, never stamped.
  pre.exec(migrations(MODULES.map((m) => m.schema))[0]!.sql);
  pre.exec(OLD_DDL.slice(OLD_DDL.indexOf('INSERT INTO meta')));
  const schemaBefore = pre.prepare('SELECT type, name, sql FROM sqlite_schema ORDER BY name').all();
  expect(version(pre)).toBe(0);
  pre.close();

  const db = openDatabase(path, MODULES);
  // Stamped 1 (nothing of it re-made), then the later migrations ran: only their objects are new.
  const later = new DatabaseSync(':memory:');
  for (const m of migrations([]).slice(1)) later.exec(m.sql);
  const added = new Set((later.prepare('SELECT name FROM sqlite_schema').all() as { name: string }[]).map((r) => r.name));
  later.close();
  expect(version(db)).toBe(migrations([]).at(-1)!.version);
  const schemaAfter = db.prepare('SELECT type, name, sql FROM sqlite_schema ORDER BY name').all() as { name: string }[];
  expect(schemaAfter.filter((r) => !added.has(r.name))).toEqual(schemaBefore);
  expect(schemaAfter.filter((r) => added.has(r.name)).map((r) => r.name)).toEqual([...added].sort());
  expect(db.prepare('SELECT title FROM work_items').all()).toEqual([{ title: 'Kept across the upgrade' }]);
  db.close();
});

test('a new store gets the same tables as an adopted one and the newest stamp', () => {
  const adoptedPath = file();
  const old = new DatabaseSync(adoptedPath);
  old.exec(OLD_DDL);
  old.close();
  const adopted = openDatabase(adoptedPath, MODULES);
  const fresh = openDatabase(file(), MODULES);
  expect(tables(fresh)).toEqual(tables(adopted));
  expect(version(fresh)).toBe(version(adopted));
  adopted.close();
  fresh.close();
});

test('a store from a newer build is refused and left untouched', () => {
  const path = file();
  const newer = new DatabaseSync(path);
  newer.exec('CREATE TABLE from_the_future (x INTEGER); PRAGMA user_version = 99');
  newer.close();

  expect(() => openDatabase(path, MODULES)).toThrow(NewerDatabaseError);
  expect(() => openDatabase(path, MODULES)).toThrow(
    `the database ${path} was made by a newer svc (schema 99, this build knows ${migrations([]).at(-1)!.version})`,
  );
  const check = new DatabaseSync(path);
  expect(version(check)).toBe(99);
  expect(tables(check)).toEqual(['from_the_future']);
  check.close();
});

test("svc server on a newer build's store exits 2 with one line naming the file and both versions", () => {
  const path = file();
  const newer = new DatabaseSync(path);
  newer.exec('PRAGMA user_version = 7');
  newer.close();
  for (const args of [
    ['server', '--port', '0', '--db', path],
    ['server', 'token', 'create', '--db', path, '--workspace', 'acme'],
  ]) {
    const run = spawnSync(process.execPath, ['bin/svc.js', ...args], { encoding: 'utf8', timeout: 20_000 });
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(`svc: the database ${path} was made by a newer svc (schema 7, this build knows ${migrations([]).at(-1)!.version})\n`);
  }
});
