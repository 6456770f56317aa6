// How src/commands is laid out, checked so it stays that way: each group registers itself and
// loads its handlers only inside `.action()` (so `svc --help` and `--version` load none), and only
// the commands whose work a signal must wind down install the signal trap.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, test } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../../src/commands');
const groups = readdirSync(ROOT).filter((name) => statSync(join(ROOT, name)).isDirectory());

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => (statSync(join(dir, name)).isDirectory() ? filesUnder(join(dir, name)) : [join(dir, name)]));
}

describe('src/commands', () => {
  test.each(groups)('%s/ has a register.ts that imports its handlers only lazily', (group) => {
    const source = readFileSync(join(ROOT, group, 'register.ts'), 'utf8');
    // A value import of a sibling would load the handler with the tree; types are erased.
    const eager = [...source.matchAll(/^import (?!type )[^;]*from '\.\/([^']+)';$/gm)].map((m) => m[1]);
    expect(eager).toEqual([]);
  });

  test('only dispatch runs (here, hosted, the demo) and svc server install the signal trap', () => {
    const trapping = filesUnder(ROOT)
      .filter((file) => readFileSync(file, 'utf8').includes('interrupts.handle'))
      .map((file) => relative(ROOT, file))
      .sort();
    expect(trapping).toEqual(['demo/demo.ts', 'dispatch/run-dispatch.ts', 'hosted/run.ts', 'server/serve.ts']);
  });
});
