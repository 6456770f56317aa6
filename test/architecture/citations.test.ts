// What the code cites, a reader of this repository can open (CONTRIBUTING.md, "Code map"): the
// project's docs (docs/dispatch.md, docs/trust.md, …) and the operations by their operationId, which
// the OpenAPI document names. Never a section number of a document the repository does not ship
// (DISPATCH.md's §N, api-v1's "section 8" or "op 25"), nor an issue number of the tracker.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { expect, test } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const CITATION = /DISPATCH(?:\.md)?\s*§|§\s*\d|\bop \d+\b|\bsection \d+|\b[Ii]ssue \d+/;

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? (e.name === 'node_modules' ? [] : files(join(dir, e.name))) : /\.(?:ts|mjs)$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

test('src/, test/ and bench/ cite no section or issue number of a document outside the repository', () => {
  const self = relative(ROOT, import.meta.filename);
  const found = ['src', 'test', 'bench']
    .flatMap((d) => files(join(ROOT, d)))
    .filter((f) => relative(ROOT, f) !== self)
    .flatMap((f) =>
      readFileSync(f, 'utf8')
        .split('\n')
        .flatMap((line, i) => (CITATION.test(line) ? [`${relative(ROOT, f)}:${i + 1}: ${line.trim()}`] : [])),
    );
  expect(found).toEqual([]);
});

test('the pattern finds what it is for', () => {
  for (const line of [
    '// DISPATCH §8 says',
    '// (DISPATCH.md §3)',
    '// §4 "stops with"',
    "describe('open (op 25)'",
    '// the section 8 headers',
    '// Issue 24: as root',
  ])
    expect(CITATION.test(line), line).toBe(true);
  for (const line of ['// docs/dispatch.md, "Work advances"', "describe('openDispatchRun'", '// option 25', '// the stop reason'])
    expect(CITATION.test(line), line).toBe(false);
});
