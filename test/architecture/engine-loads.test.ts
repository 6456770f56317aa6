// What a local dispatch command loads as it starts: the engine (engine.ts, start.ts) and everything
// they import statically. A hosted run's side (simple-git, the broker: loadHosted) and the workflow
// file's parser (yaml: workflow/parse.ts, loaded when a repository has a file) are imported only
// where they are needed, so they are not among them: together 12-13 ms of every `svc run`'s CPU. The
// fence (its proxy, resolver and nftables rules) loads for a fenced leg only: a run with an open
// network (a fleet's worker as svc's own user) reads the modes' names and nothing of it.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { expect, test } from 'vitest';

const SRC = resolve(import.meta.dirname, '../../src');

/** Specifiers a module loads when it is evaluated: value imports and re-exports, not `import()` and not types. */
function staticImports(text: string): string[] {
  const statements = text.match(/^(?:import|export)\b[^;]*?\bfrom\s+'[^']+'|^import\s+'[^']+'/gms) ?? [];
  return statements.filter((s) => !/^(?:import|export)\s+type\b/.test(s)).map((s) => /'([^']+)'/.exec(s)?.[1] ?? '');
}

/** The packages (bare specifiers) and src modules evaluated with `entries`. */
function closure(entries: string[]): { modules: Set<string>; packages: Set<string> } {
  const modules = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    if (modules.has(file)) return;
    modules.add(file);
    for (const spec of staticImports(readFileSync(file, 'utf8'))) {
      if (spec.startsWith('.')) {
        const target = resolve(dirname(file), spec).replace(/\.js$/, '.ts');
        if (existsSync(target)) visit(target);
      } else if (!spec.startsWith('node:')) packages.add(spec.split('/')[0]!.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!);
    }
  };
  for (const e of entries) visit(join(SRC, e));
  return { modules, packages };
}

test('the engine and the run loop load neither simple-git nor yaml, nor the hosted side or the workflow parser', () => {
  const { modules, packages } = closure(['dispatch/engine.ts', 'dispatch/start.ts', 'dispatch/index.ts', 'commands/dispatch/run-dispatch.ts']);
  expect(modules.size).toBeGreaterThan(50);
  expect([...packages].filter((p) => p === 'simple-git' || p === 'yaml')).toEqual([]);
  const rel = [...modules].map((m) => relative(SRC, m));
  expect(rel.filter((m) => m === 'dispatch/workflow/parse.ts' || m === 'dispatch/hosted/git.ts' || m === 'dispatch/hosted/index.ts')).toEqual([]);
  expect(rel.filter((m) => m === 'dispatch/fence/index.ts' || m === 'dispatch/fence/proxy.ts' || m === 'dispatch/fence/dns-stub.ts')).toEqual([]);
});

test('the check sees both where they are imported', () => {
  expect(closure(['dispatch/workflow/parse.ts']).packages.has('yaml')).toBe(true);
  expect(closure(['dispatch/hosted/index.ts']).packages.has('simple-git')).toBe(true);
  expect([...closure(['dispatch/fence/index.ts']).modules].map((m) => relative(SRC, m))).toContain('dispatch/fence/proxy.ts');
  expect(staticImports("const { parseWorkflow } = await import('./parse.js');")).toEqual([]);
  expect(staticImports("export { a } from './b.js';\nexport type { C } from './c.js';")).toEqual(['./b.js']);
});
