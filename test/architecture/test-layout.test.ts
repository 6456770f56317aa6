// test/ mirrors src/ folder for folder (CONTRIBUTING.md, "Where a test goes"): a test of
// src/dispatch/lifecycle/x.ts sits in test/dispatch/lifecycle/, so the tests of a module are found
// where the module is. The folders below are the only others: each is about the program as a whole
// or holds what the tests share, and no src folder would be the right home for its files.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { expect, test } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const TEST = join(ROOT, 'test');

/** The top folders of test/ with no src counterpart, and why each is one. */
const CROSS_CUTTING: Record<string, string> = {
  cli: 'the program as a whole: bin/svc.js, help and usage, exit codes, error lines, stdio, start-up, whole runs across commands',
  trust: 'the boundary and the faults of docs/trust.md, across every layer (npm run soak is its long form)',
  architecture: 'how src/ and test/ are laid out: the arrows between layers, the command tree, this file',
  support: 'the harnesses every folder shares',
  fixtures: 'the files tests read or run: fake agents, report fixtures, hosted agents',
  agents: 'the real agent CLIs (npm run test:agents)',
  examples: 'the examples/ folder of the package, checked by each CI engine',
  package: 'the packed package: the tarball, the Node guard, the compile cache',
  bench: 'the bench/ folder of the repository: what npm run bench writes (bench/results.mjs)',
};

/** Whether a folder holds a file: git keeps no empty folder, so one left on a disk by a move is none. */
function holdsFiles(dir: string): boolean {
  return readdirSync(dir).some((name) => !statSync(join(dir, name)).isDirectory() || holdsFiles(join(dir, name)));
}

/** Every folder under test/, below the cross-cutting ones' own trees, as paths relative to test/. */
function folders(dir: string): string[] {
  return readdirSync(dir)
    .filter((name) => statSync(join(dir, name)).isDirectory() && holdsFiles(join(dir, name)))
    .flatMap((name) => {
      const path = join(dir, name);
      const rel = relative(TEST, path);
      if (rel in CROSS_CUTTING) return [rel];
      return [rel, ...folders(path)];
    });
}

/** A folder's own helpers may sit in a `support/` folder beside its tests. */
const isHelperFolder = (rel: string) => rel.split('/').at(-1) === 'support';

/** What breaks the layout: folders of test/ with no src counterpart, a stale or shadowing entry of the list, a test outside any folder. */
function offences(): string[] {
  const unmirrored = folders(TEST).filter((rel) => !(rel in CROSS_CUTTING) && !isHelperFolder(rel) && !existsSync(join(ROOT, 'src', rel)));
  const stale = Object.keys(CROSS_CUTTING).filter((name) => !existsSync(join(TEST, name)) || existsSync(join(ROOT, 'src', name)));
  const loose = readdirSync(TEST).filter((name) => name.endsWith('.test.ts'));
  return [
    ...unmirrored.map((rel) => `test/${rel}: no src/${rel}`),
    ...stale.map((name) => `CROSS_CUTTING.${name}: no test/${name}, or a src/${name} it shadows`),
    ...loose.map((name) => `test/${name}: not in a folder`),
  ];
}

test('every folder of test/ has its src/ counterpart, or is one of the cross-cutting folders', () => {
  expect(offences()).toEqual([]);
});
