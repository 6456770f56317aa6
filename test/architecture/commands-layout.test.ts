// How src/commands is laid out, checked so it stays that way: each group registers itself and
// loads its handlers only inside `.action()` (so `svc --help` and `--version` load none), no module
// imports one that imports it back, and only the commands whose work a signal must wind down
// install the signal trap.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, test } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../../src/commands');
const groups = readdirSync(ROOT).filter((name) => statSync(join(ROOT, name)).isDirectory());

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => (statSync(join(dir, name)).isDirectory() ? filesUnder(join(dir, name)) : [join(dir, name)]));
}

describe('src/commands', () => {
  test.each(groups)('%s/ has a register.ts that imports its handlers only lazily (its flags.ts eagerly)', (group) => {
    const source = readFileSync(join(ROOT, group, 'register.ts'), 'utf8');
    // A value import of a sibling would load the handler with the tree; types are erased. The
    // group's flag table (flags.ts) is the one sibling the tree needs.
    const eager = [...source.matchAll(/^import (?!type )[^;]*from '\.\/([^']+)';$/gm)].map((m) => m[1]).filter((file) => file !== 'flags.js');
    expect(eager).toEqual([]);
  });

  test('only dispatch runs (here, hosted, the demo) and svc server install the signal trap', () => {
    const trapping = filesUnder(ROOT)
      .filter((file) => readFileSync(file, 'utf8').includes('interrupts.handle'))
      .map((file) => relative(ROOT, file))
      .sort();
    expect(trapping).toEqual(['demo/demo.ts', 'dispatch/run-dispatch.ts', 'hosted/run.ts', 'server/serve.ts']);
  });

  test('no import cycle: program.ts builds the tree from the register files, which never import it back', () => {
    // Static value imports (types are erased); a cycle would make a group's module order matter.
    const files = filesUnder(ROOT).filter((file) => file.endsWith('.ts'));
    const imports = new Map(
      files.map((file) => [
        file,
        [...readFileSync(file, 'utf8').matchAll(/^(?:import|export) (?!type )[^;]*?from '(\.[^']+)';$/gm)]
          .map((m) => resolve(dirname(file), m[1]!).replace(/\.js$/, '.ts'))
          .filter((target) => target.startsWith(ROOT)),
      ]),
    );
    const cycles: string[] = [];
    const seen = new Set<string>();
    const visit = (file: string, path: string[]): void => {
      if (path.includes(file)) return void cycles.push([...path.slice(path.indexOf(file)), file].map((f) => relative(ROOT, f)).join(' → '));
      if (seen.has(file)) return;
      for (const target of imports.get(file) ?? []) visit(target, [...path, file]);
      seen.add(file);
    };
    for (const file of files) visit(file, []);
    expect(cycles).toEqual([]);
    // The check sees the imports it should: program.ts reaches every group's register file.
    expect(imports.get(join(ROOT, 'program.ts'))).toContain(join(ROOT, 'dispatch', 'register.ts'));
  });
});
