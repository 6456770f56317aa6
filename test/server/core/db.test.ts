// The store: node:sqlite loads without its ExperimentalWarning, while every other warning still
// prints; transactions roll back on a throw and nest by joining.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';
import { expect, test } from 'vitest';
import { openDatabase, transaction } from '../../../src/server/db.js';

test('only the SQLite ExperimentalWarning is silenced', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-db-'));
  const entry = join(dir, 'entry.ts');
  writeFileSync(
    entry,
    `import { openDatabase } from ${JSON.stringify(resolve('src/server/db.ts'))};
     openDatabase(':memory:', []);
     process.emitWarning('something else is experimental', 'ExperimentalWarning');
     process.emitWarning('a plain warning');`,
  );
  const out = join(dir, 'entry.mjs');
  await build({ entryPoints: [entry], outfile: out, bundle: true, format: 'esm', platform: 'node', logLevel: 'silent' });
  const run = spawnSync(process.execPath, [out], { encoding: 'utf8' });
  expect(run.status).toBe(0);
  expect(run.stderr).not.toMatch(/SQLite/);
  expect(run.stderr).toMatch(/something else is experimental/);
  expect(run.stderr).toMatch(/a plain warning/);
});

test('transaction commits, rolls back on a throw, and nested calls join the outer one', () => {
  const db = openDatabase(':memory:', [{ name: 't', schema: 'CREATE TABLE t (v INTEGER);', routes: [] }]);
  transaction(db, () => db.prepare('INSERT INTO t VALUES (1)').run());
  expect(() =>
    transaction(db, () => {
      db.prepare('INSERT INTO t VALUES (2)').run();
      transaction(db, () => db.prepare('INSERT INTO t VALUES (3)').run());
      throw new Error('boom');
    }),
  ).toThrow('boom');
  expect(
    db
      .prepare('SELECT v FROM t')
      .all()
      .map((r) => (r as { v: number }).v),
  ).toEqual([1]);
  expect(db.prepare('PRAGMA foreign_keys').get()).toEqual({ foreign_keys: 1 });
});

test('the database and its -wal and -shm files are readable by their owner only, new or left 0644 by an older build', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-db-mode-'));
  const fresh = join(dir, 'fresh.db');
  const old = join(dir, 'old.db');
  const oldMask = process.umask(0o022);
  try {
    for (const f of [old, `${old}-wal`, `${old}-shm`]) writeFileSync(f, '', { mode: 0o644 });
    chmodSync(old, 0o644);
    for (const file of [fresh, old]) {
      const db = openDatabase(file, []);
      db.exec('CREATE TABLE IF NOT EXISTS t (x); INSERT INTO t VALUES (1)');
      for (const f of [file, `${file}-wal`, `${file}-shm`]) expect((statSync(f).mode & 0o777).toString(8), f).toBe('600');
      db.close();
    }
  } finally {
    process.umask(oldMask);
  }
});

test('a SQL text is compiled once per database, and its statement survives a failed run', () => {
  const db = openDatabase(':memory:', [{ name: 'u', schema: 'CREATE TABLE u (v INTEGER PRIMARY KEY);', routes: [] }]);
  const insert = 'INSERT INTO u (v) VALUES (?)';
  expect(db.prepare(insert)).toBe(db.prepare(insert));
  db.prepare(insert).run(1);
  expect(() => db.prepare(insert).run(1)).toThrow(/UNIQUE/);
  db.prepare(insert).run(2);
  const all = db.prepare('SELECT v FROM u ORDER BY v');
  // A get() that stops at the first row leaves nothing behind for the next use.
  expect(all.get()).toEqual({ v: 1 });
  expect(all.all()).toEqual([{ v: 1 }, { v: 2 }]);
  // Texts beyond the bound are compiled afresh, the cache started over.
  const first = db.prepare('SELECT 0');
  for (let i = 1; i <= 1000; i++) db.prepare(`SELECT ${i}`);
  expect(db.prepare('SELECT 0')).not.toBe(first);
  db.close();
});
