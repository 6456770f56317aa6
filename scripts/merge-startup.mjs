// Every ES module Node loads costs start-up time (about 0.8 ms each on this project's machine, a
// resolve, a module job, a link and an evaluation), and esbuild's code splitting gives each set of
// modules shared by a different set of entry points a chunk of its own: `svc --help` loaded cli.js
// and five small chunks it imports. The chunks cli.js imports (and so loads on every start) are
// bundled again here with cli.js itself into one module, cli.js, and every import of them in the
// build is pointed at it: the same code, one instance, one module (cli.ts has no top-level await,
// so a lazy chunk importing it does not wait on it). So is cli.js's one lazy import (the config
// store and the output, which every command loads before it runs), into command.js. Chunks the
// service (server.js) reaches stay as they are, so loading the service alone never loads the CLI's
// start-up code; only esbuild's runtime helpers, which hold no state, are copied for the CLI's side.
import { readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';

const LAZY_MERGED = 'command.js';
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

/** The names a chunk exports, from esbuild's one `export{a,b as c}` at its end (an entry may have none). */
function exportsOf(code, file) {
  const lists = [...code.matchAll(/\bexport\s*\{([^}]*)\}\s*;?/g)];
  if (lists.length === 0 && !/\bexport\b/.test(code)) return [];
  if (lists.length !== 1 || /\bexport\s+(?:default|\*|const|let|var|function|class)\b/.test(code))
    throw new Error(`${file}: exports not in esbuild's one export list`);
  return lists[0][1]
    .split(',')
    .map((s) =>
      s
        .trim()
        .split(/\s+as\s+/)
        .pop(),
    )
    .filter(Boolean);
}

/**
 * Merges the modules `from` imports statically (minus `exclude` and what `keepApart` reaches) into
 * `into` in `dir`, written by esbuild from them (their source maps chained, so stack positions still
 * map to src/), and points every import of them there. With `withFrom`, `from` is merged too (a
 * lazily imported entry: its import then loads the one module). `banner` is each chunk's first
 * line, given to `into` once. Returns the files merged.
 */
async function mergeGroup(dir, { from, withFrom = false, into, keepApart, exclude = new Set(), banner, options }) {
  const apart = reach(dir, keepApart, [STATIC, DYNAMIC]);
  // esbuild's runtime helpers (`__commonJS`, `__toESM`, … and nothing else) hold no state: the
  // service keeps its chunk of them, and the CLI's side gets its own copy in the merged module.
  const helpers = (f) => exportsOf(readFileSync(join(dir, f), 'utf8'), f).every((name) => name.startsWith('__'));
  const chunks = [...reach(dir, from, [STATIC])].filter((f) => (f !== from || withFrom) && !exclude.has(f) && (!apart.has(f) || helpers(f)));
  const copied = new Set(chunks.filter((f) => apart.has(f)));
  if (chunks.length < 2) return [];
  const seen = new Map();
  for (const file of chunks) {
    for (const name of exportsOf(readFileSync(join(dir, file), 'utf8'), file)) {
      // A merged entry re-exports its chunks' names: the same bindings, no clash.
      if (seen.has(name) && !(withFrom && (file === from || seen.get(name) === from)))
        throw new Error(`${file} and ${seen.get(name)} both export ${name}: they cannot be merged into ${into}`);
      seen.set(name, file);
    }
  }
  const merged = new Set(chunks);
  if (readdirSync(dir).includes(into) && !(withFrom && into === from)) throw new Error(`${into} exists in the build already`);
  const out = join(dir, `${into}.merging`);
  await build({
    ...options,
    stdin: { contents: chunks.map((f) => `export * from "./${f}";`).join('\n'), resolveDir: dir, sourcefile: `${into}-entry.js`, loader: 'js' },
    outfile: out,
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
          // Each chunk's banner goes (the merged module has its own), blanked so its map still fits.
          b.onLoad({ filter: /\.js$/ }, ({ path }) => ({
            contents: readFileSync(path, 'utf8').replace(banner, ' '.repeat(banner.length)),
            loader: 'js',
            resolveDir: dir,
          }));
        },
      },
    ],
  });
  for (const file of chunks) if (!copied.has(file)) rmSync(join(dir, file)), rmSync(join(dir, `${file}.map`), { force: true });
  const code = readFileSync(out, 'utf8').replace(`sourceMappingURL=${into}.merging.map`, `sourceMappingURL=${into}.map`);
  writeFileSync(join(dir, into), code);
  renameSync(`${out}.map`, join(dir, `${into}.map`));
  rmSync(out);
  // Imports of the merged chunks now name `into`, padded to the same length (the maps hold).
  for (const file of readdirSync(dir)) {
    if (!file.endsWith('.js') || file === into) continue;
    const text = readFileSync(join(dir, file), 'utf8');
    const next = text.replace(/"\.\/([\w.-]+\.js)"/g, (whole, name) => {
      if (!merged.has(name) || (copied.has(name) && apart.has(file))) return whole;
      if (whole.length < into.length + 4) throw new Error(`${file}: "./${name}" is shorter than "./${into}"`);
      return `"./${into}"${' '.repeat(whole.length - into.length - 4)}`;
    });
    if (next !== text) writeFileSync(join(dir, file), next);
  }
  return chunks;
}

/**
 * Two groups: the entry (cli.js) with the chunks it imports (every start: one module, still named
 * cli.js), and its one lazy import with the modules it imports, the config store and the output
 * that every command loads before it runs (`lazyEntry`: command.js, so `svc --help` still loads
 * none of it).
 */
export async function mergeStartupChunks(dir, { entry, lazyEntry, keepApart, banner, options }) {
  const first = await mergeGroup(dir, { from: entry, withFrom: true, into: entry, keepApart, banner, options });
  const lazy = readdirSync(dir).find((f) => f.startsWith(`${lazyEntry}-`) && f.endsWith('.js'));
  if (!lazy) throw new Error(`no ${lazyEntry}-*.js in the build`);
  await mergeGroup(dir, { from: lazy, withFrom: true, into: LAZY_MERGED, keepApart, exclude: new Set([entry, ...first]), banner, options });
}
