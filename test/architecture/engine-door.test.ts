// The engine has one front door (src/dispatch/index.ts): src/commands takes values from it and from
// nowhere else in src/dispatch, statically or with a dynamic import(); types it may take from
// anywhere in the engine, since they are erased.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { expect, test } from 'vitest';

const SRC = resolve(import.meta.dirname, '../../src');
const COMMANDS = join(SRC, 'commands');
const DISPATCH = join(SRC, 'dispatch');
const DOOR = join(DISPATCH, 'index.ts');

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => (statSync(join(dir, name)).isDirectory() ? filesUnder(join(dir, name)) : [join(dir, name)]));
}

interface Import {
  specifier: string;
  /** False for `import type`, `export type` and `import { type A, type B }`: erased. */
  values: boolean;
  line: string;
}

/** Every import and re-export of `source`, static (over several lines) or dynamic. */
function importsOf(source: string): Import[] {
  const staticOnes = [...source.matchAll(/^(?:import|export)\s+(type\s+)?([^;]*?)\s+from\s+'([^']+)';/gm)].map((m) => ({
    specifier: m[3]!,
    values: !m[1] && !/^\{\s*type\s+[\w$]+(?:\s+as\s+[\w$]+)?(?:\s*,\s*type\s+[\w$]+(?:\s+as\s+[\w$]+)?)*\s*,?\s*\}$/.test(m[2]!.trim()),
    line: m[0].replace(/\s+/g, ' '),
  }));
  const dynamic = [...source.matchAll(/\bimport\(\s*'([^']+)'\s*\)/g)].map((m) => ({ specifier: m[1]!, values: true, line: m[0] }));
  return [...staticOnes, ...dynamic];
}

test.each([
  ["import { a } from '../../dispatch/x.js';", [true]],
  ["export { b } from '../../dispatch/y.js';", [true]],
  ["const { c } = await import('../../dispatch/z.js');", [true]],
  ["import {\n  type A,\n  b,\n} from '../../dispatch/x.js';", [true]],
  ["import type { A } from '../../dispatch/x.js';", [false]],
  ["import { type A, type B as C } from '../../dispatch/x.js';", [false]],
  ["export type { A } from '../../dispatch/x.js';", [false]],
])('the check reads %j as taking values: %j', (source, values) => {
  expect(importsOf(source).map((i) => i.values)).toEqual(values);
});

test('src/commands takes values from src/dispatch only through src/dispatch/index.ts', () => {
  const imports = filesUnder(COMMANDS)
    .filter((file) => file.endsWith('.ts'))
    .flatMap((file) =>
      importsOf(readFileSync(file, 'utf8'))
        .filter((i) => i.specifier.startsWith('.'))
        .map((i) => ({ ...i, file: relative(SRC, file), target: resolve(dirname(file), i.specifier).replace(/\.js$/, '.ts') }))
        .filter((i) => i.target.startsWith(`${DISPATCH}/`)),
    );
  expect(imports.filter((i) => i.values && i.target !== DOOR).map((i) => `${i.file}: ${i.line}`)).toEqual([]);
  // The check sees what it should: the dispatch commands go through the door, and take types beside it.
  expect(imports.some((i) => i.file === 'commands/dispatch/run-dispatch.ts' && i.values && i.target === DOOR)).toBe(true);
  expect(imports.some((i) => !i.values && i.target !== DOOR)).toBe(true);
});

test('what the door loads with every command takes no builtin beyond node:fs and node:path', () => {
  // The config store imports the door, so its static imports load with every command: node:os cost
  // `svc config get` 3 ms of CPU, node:crypto loads Node's streams. What needs more loads lazily.
  const builtins = new Set<string>();
  const seen = new Set<string>();
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const i of importsOf(readFileSync(file, 'utf8'))) {
      if (!i.values || i.line.startsWith('import(')) continue;
      if (i.specifier.startsWith('node:')) builtins.add(i.specifier);
      else if (i.specifier.startsWith('.')) visit(resolve(dirname(file), i.specifier).replace(/\.js$/, '.ts'));
    }
  };
  visit(DOOR);
  expect([...builtins].sort()).toEqual(['node:fs', 'node:path']);
  // The walk reaches what the door exports directly, and stops at what it loads on a call.
  expect(seen).toContain(join(DISPATCH, 'state', 'folder.ts'));
  expect(seen).not.toContain(join(DISPATCH, 'start.ts'));
});
