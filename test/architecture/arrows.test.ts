// The report and the live page share the timeline renderer without bending the layers: src/html is
// a leaf (it imports nothing outside itself), the server imports only the contract, src/html and
// itself, and the dispatch engine never imports the server. The arrows of the rest of the picture
// (commands → dispatch → api → contract) are checked here too.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, test } from 'vitest';

const SRC = resolve(import.meta.dirname, '../../src');

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** The top folders of src/ that `folder`'s files import (relative imports only). */
function importedLayers(folder: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const file of files(join(SRC, folder))) {
    for (const m of readFileSync(file, 'utf8').matchAll(/(?:from|import)\s*\(?\s*'(\.[^']+)'/g)) {
      const target = relative(SRC, resolve(dirname(file), m[1]!));
      const layer = target.split('/')[0]!;
      out.set(layer, [...(out.get(layer) ?? []), relative(SRC, file)]);
    }
  }
  return out;
}

describe('layers', () => {
  test('src/html imports nothing outside itself', () => {
    expect([...importedLayers('html').keys()]).toEqual(['html']);
  });

  test('src/server imports only src/contract, src/html and itself', () => {
    expect([...importedLayers('server').keys()].sort()).toEqual(['contract', 'html', 'server']);
  });

  test('src/dispatch never imports the server or the commands', () => {
    const layers = importedLayers('dispatch');
    expect(layers.get('server')).toBeUndefined();
    expect(layers.get('commands')).toBeUndefined();
    expect(layers.get('html')).toBeDefined();
  });

  test('src/api imports only src/contract and itself, and src/contract only itself', () => {
    expect([...importedLayers('api').keys()].sort()).toEqual(['api', 'contract']);
    expect([...importedLayers('contract').keys()]).toEqual(['contract']);
  });

  test("src/ui imports none of the commands or the server, and only the engine's types (the summaries it prints)", () => {
    const layers = importedLayers('ui');
    for (const upper of ['commands', 'server']) expect(layers.get(upper)).toBeUndefined();
    const values = files(join(SRC, 'ui')).flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/^import (?!type )[^;]*from '(\.[^']+)';$/gm)].map((m) => relative(SRC, resolve(dirname(file), m[1]!))),
    );
    expect(values.filter((target) => !target.startsWith('ui/'))).toEqual([]);
  });
});
