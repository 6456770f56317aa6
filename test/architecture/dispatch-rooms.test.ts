// The rooms of src/dispatch point one way: lifecycle runs a leg with everything below it, and
// nothing below imports it back (what every leg shares, LegContext, lives beside ports.ts). Only
// the front door (index.ts, start.ts, engine.ts) reaches into lifecycle. And no two files import
// each other, directly or through a ring of rooms' files.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, test } from 'vitest';

const DISPATCH = resolve(import.meta.dirname, '../../src/dispatch');
const DOOR = new Set(['index.ts', 'start.ts', 'engine.ts']);

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** Each file of src/dispatch (relative to it) and the files of src/dispatch it imports, types included. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of files(DISPATCH)) {
    const targets = [...readFileSync(file, 'utf8').matchAll(/(?:from|import)\s*\(?\s*'(\.[^']+)'/g)]
      .map((m) => relative(DISPATCH, resolve(dirname(file), m[1]!)).replace(/\.js$/, '.ts'))
      .filter((t) => !t.startsWith('..'));
    graph.set(relative(DISPATCH, file), targets);
  }
  return graph;
}

describe('the rooms of src/dispatch', () => {
  const graph = importGraph();

  test('nothing outside lifecycle imports it, but the front door', () => {
    const upward = [...graph].flatMap(([file, targets]) =>
      file.startsWith('lifecycle/') || DOOR.has(file) ? [] : targets.filter((t) => t.startsWith('lifecycle/')).map((t) => `${file} → ${t}`),
    );
    expect(upward).toEqual([]);
  });

  test('no file imports one that imports it back (types included)', () => {
    const pairs = [...graph].flatMap(([file, targets]) => targets.filter((t) => t > file && graph.get(t)?.includes(file)).map((t) => `${file} ↔ ${t}`));
    expect(pairs).toEqual([]);
  });
});
