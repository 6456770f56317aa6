// The CLI imports the contract's types and constants, never the code that builds the document:
// building it (TypeBox) and checking against it (ajv) is the server's and the tests' work, and
// loading either would cost every command start-up time (src/contract/types.ts says so).
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, test } from 'vitest';

const root = new URL('../../', import.meta.url).pathname;
const src = join(root, 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Every module specifier a file loads at run time: type-only imports and re-exports are left out. */
function runtimeImports(text: string): string[] {
  const statements = text.match(/^(?:import|export)\b[^;]*?\bfrom\s+'[^']+'|^import\s+'[^']+'|\bimport\(\s*'[^']+'\s*\)/gms) ?? [];
  return statements.filter((statement) => !/^(?:import|export)\s+type\b/.test(statement)).map((statement) => /'([^']+)'/.exec(statement)?.[1] ?? '');
}

const BUILDERS = /(?:^typebox(?:\/|$)|^ajv(?:\/|$)|contract\/(?:schemas-[\w-]+|openapi|validate)\.js$)/;

describe('what the client loads of the contract', () => {
  test('types.ts imports nothing at run time', () => {
    expect(runtimeImports(readFileSync(join(src, 'contract/types.ts'), 'utf8'))).toEqual([]);
  });

  test('no module outside src/contract and src/server loads the schemas, the document, typebox or ajv', () => {
    const client = sourceFiles(src).filter((file) => !/^(contract|server)\//.test(relative(src, file)));
    expect(client.length).toBeGreaterThan(100);
    const offenders = client.flatMap((file) =>
      runtimeImports(readFileSync(file, 'utf8'))
        .filter((specifier) => BUILDERS.test(specifier))
        .map((specifier) => `${relative(root, file)} → ${specifier}`),
    );
    expect(offenders).toEqual([]);
  });

  test('the check sees a value import of the schemas, and passes a type-only one', () => {
    expect(runtimeImports("import { LinkItem } from '../contract/schemas-work-items.js';")).toEqual(['../contract/schemas-work-items.js']);
    expect(runtimeImports("import type * as w from './schemas-work-items.js';\nimport type { Static } from 'typebox';")).toEqual([]);
    expect(runtimeImports("const m = await import('../contract/validate.js');")).toEqual(['../contract/validate.js']);
    expect(BUILDERS.test('typebox/type')).toBe(true);
    expect(BUILDERS.test('../../contract/types.js')).toBe(false);
  });
});
