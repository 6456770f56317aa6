// Every ES module Node loads costs start-up time (about 0.8 ms each on this project's machine, a
// resolve, a module job, a link and an evaluation), and esbuild's code splitting gives each set of
// modules shared by a different set of entry points a chunk of its own: `svc --help` loaded cli.js
// and five small chunks it imports. The chunks cli.js imports (and so loads on every start) are
// bundled again here into one module, startup.js, and every import of them in the build is pointed
// at it: the same code, one instance, fewer modules. Chunks the service (server.js) reaches stay as
// they are, so loading the service alone never loads the CLI's start-up code.
import { readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';

const MERGED = 'startup.js';
/** `from"./x.js"` and `import"./x.js"`: the static imports of a chunk (dynamic ones are `import("`). */
const STATIC = /(?:\bfrom|\bimport)\s*"\.\/([\w.-]+\.js)"/g;
const DYNAMIC = /\bimport\("\.\/([\w.-]+\.js)"\)/g;

const depsOf = (code, pattern) => [...code.matchAll(pattern)].map((m) => m[1]);

function reach(dir, from, patterns, seen = new Set()) {
  if (seen.has(from)) return seen;
  seen.add(from);
  const code = readFileSync(join(dir, from), 'utf8');
  for (const pattern of patterns) for (const dep of depsOf(code, pattern)) reach(dir, dep, patterns, seen);
  return seen;
}

/** The names a chunk exports, from esbuild's one `export{a,b as c}` at its end. */
function exportsOf(code, file) {
  const lists = [...code.matchAll(/\bexport\s*\{([^}]*)\}\s*;?/g)];
  if (lists.length !== 1 || /\bexport\s+(?:default|\*|const|let|var|function|class)\b/.test(code)) throw new Error(`${file}: exports not in esbuild's one export list`);
  return lists[0][1].split(',').map((s) => s.trim().split(/\s+as\s+/).pop()).filter(Boolean);
}

/**
 * Merges the chunks `entry` imports statically (minus those `keepApart` reaches) into startup.js in
 * `dir`, written by esbuild from the chunks (their source maps chained, so stack positions still
 * map to src/). `banner` is each chunk's first line, given to startup.js once.
 */
export async function mergeStartupChunks(dir, { entry, keepApart, banner, options }) {
  const apart = reach(dir, keepApart, [STATIC, DYNAMIC]);
  const chunks = [...reach(dir, entry, [STATIC])].filter((f) => f !== entry && !apart.has(f));
  if (chunks.length < 2) return;
  const seen = new Map();
  for (const file of chunks) {
    for (const name of exportsOf(readFileSync(join(dir, file), 'utf8'), file)) {
      if (seen.has(name)) throw new Error(`${file} and ${seen.get(name)} both export ${name}: they cannot be merged into ${MERGED}`);
      seen.set(name, file);
    }
  }
  const merged = new Set(chunks);
  await build({
    ...options,
    stdin: { contents: chunks.map((f) => `export * from "./${f}";`).join('\n'), resolveDir: dir, sourcefile: 'startup-entry.js', loader: 'js' },
    outfile: join(dir, MERGED),
    bundle: true,
    splitting: false,
    banner: { js: banner },
    plugins: [
      {
        name: 'merge-startup',
        setup(b) {
          // Node's modules and every chunk not merged stay imports, under the same names.
          b.onResolve({ filter: /.*/ }, ({ path, kind }) => {
            if (kind === 'entry-point') return undefined;
            if (path.startsWith('./') && merged.has(path.slice(2))) return { path: join(dir, path.slice(2)) };
            return { path, external: true };
          });
          // Each chunk's banner goes (startup.js has its own), blanked in place so its map still fits.
          b.onLoad({ filter: /\.js$/ }, ({ path }) => ({ contents: readFileSync(path, 'utf8').replace(banner, ' '.repeat(banner.length)), loader: 'js', resolveDir: dir }));
        },
      },
    ],
  });
  for (const file of chunks) rmSync(join(dir, file)), rmSync(join(dir, `${file}.map`), { force: true });
  // Imports of the merged chunks now name startup.js, padded to the same length (the maps hold).
  for (const file of readdirSync(dir)) {
    if (!file.endsWith('.js') || file === MERGED) continue;
    const code = readFileSync(join(dir, file), 'utf8');
    const out = code.replace(/"\.\/([\w.-]+\.js)"/g, (whole, name) => (merged.has(name) ? `"./${MERGED}"${' '.repeat(whole.length - MERGED.length - 4)}` : whole));
    if (out !== code) writeFileSync(join(dir, file), out);
  }
}
