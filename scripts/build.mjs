// Bundles the CLI into dist/ with esbuild, nothing more:
// - dist/cli.js is src/cli.ts with commander inlined; everything a command handler imports sits in
//   lazy chunks (code splitting), so `svc --help` loads no handler and `svc config get` no HTTP;
//   the chunks cli.js itself imports are merged into it: one module (merge-startup.mjs).
// - dist/server.js is the local service (src/server), for `svc server` and the tests.
// - Dependencies are bundled as they ship (their public entry points, untouched), so the package
//   installs none of them (package.json: they are devDependencies).
// - Node's own modules are taken with process.getBuiltinModule, not `import`: an ESM import of a
//   builtin builds its ES facade, which reads every export once, and so loads what the builtin
//   keeps lazy (node:fs its streams, node:util its TextDecoder): about 6 ms of every start-up,
//   measured with --cpu-prof (compileForPublicLoader under the ESM loader's builtin strategy).
// Each build writes a fresh folder and swaps it in for dist/ in two renames: a test spawning
// bin/svc.js meanwhile sees the old build or the new one, and no chunk of an earlier build remains.
// Then, but for the tarball, svc's modules are compiled once into dist/compile-cache.
import { randomBytes } from 'node:crypto';
import { readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { mergeStartupChunks } from './merge-startup.mjs';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const root = new URL('..', import.meta.url).pathname;
const tag = `${process.pid}-${randomBytes(4).toString('hex')}`;
const fresh = `${root}.dist-${tag}`;
// Bundled CommonJS dependencies (ajv, semver, …) call require() for Node's own modules; $b takes a
// builtin for the static imports (takeBuiltinsDirectly). globalThis: a chunk may declare its own
// `process` (`import process from 'node:process'` becomes a const), not initialised yet here.
const BANNER = "const $b = (id) => globalThis.process.getBuiltinModule(id), require = $b('node:module').createRequire(import.meta.url);";

/**
 * `import{a as b}from"node:fs"` → `const{a:b}=$b("node:fs")`, `import fs from"node:fs"` →
 * `const fs=$b("node:fs")`: the same length, so the source maps stay true (spaces pad the few
 * characters `as` saves). Each chunk's banner defines `$b`; a static import of a builtin left in
 * any other form fails the build, so none slips back to the ES facade.
 */
function takeBuiltinsDirectly(code, file) {
  if (/\$b\b/.test(code.replace(BANNER, ''))) throw new Error(`${file}: the name $b is taken; pick another for the builtin helper`);
  const out = code
    .replace(/(?<=^|[;}\n])import\{([\w$]+(?: as [\w$]+)?(?:,[\w$]+(?: as [\w$]+)?)*)\}from("node:[a-z0-9_/]+")/gm, (whole, names, id) => {
      // A builtin taken directly has no `default`: its exports object is the module.
      if (/(?:^|,)default\b/.test(names)) throw new Error(`${file}: ${whole} needs the ES facade's default`);
      const line = `const{${names.replaceAll(' as ', ':')}}=$b(${id})`;
      return line + ' '.repeat(whole.length - line.length);
    })
    .replace(/(?<=^|[;}\n])import ([\w$]+) from("node:[a-z0-9_/]+")/gm, (_, name, id) => `const ${name}=$b(${id})`);
  const left = /(?<=^|[;}\n])import\b[^;("]*"node:/m.exec(out);
  if (left) throw new Error(`${file}: a builtin import of an unexpected form remains: ${out.slice(left.index, left.index + 80)}`);
  return out;
}

/** commander's `import childProcess from 'node:child_process'` → scripts/shims/lazy-child-process.js. */
const lazyChildProcess = {
  name: 'commander-lazy-child-process',
  setup(b) {
    b.onResolve({ filter: /^node:child_process$/ }, ({ importer }) =>
      importer.includes('/node_modules/commander/') ? { path: `${root}scripts/shims/lazy-child-process.js` } : undefined,
    );
  },
};

try {
  await build({
    entryPoints: { cli: 'src/cli.ts', server: 'src/server/index.ts' },
    outdir: fresh,
    absWorkingDir: root,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node22',
    packages: 'bundle',
    banner: { js: BANNER },
    plugins: [lazyChildProcess],
    // Whitespace and syntax only: names stay, and dist/*.js.map maps stack positions back to src/.
    minifyWhitespace: true,
    minifySyntax: true,
    sourcemap: 'linked',
    logLevel: 'warning',
    define: { __SVC_VERSION__: JSON.stringify(pkg.version) },
  });
  // The chunks every start loads become one module (merge-startup.mjs).
  await mergeStartupChunks(fresh, {
    entry: 'cli.js',
    lazyEntry: 'lazy-core',
    keepApart: 'server.js',
    banner: BANNER,
    options: {
      absWorkingDir: root,
      format: 'esm',
      platform: 'node',
      target: 'node22',
      minifyWhitespace: true,
      minifySyntax: true,
      sourcemap: 'linked',
      logLevel: 'warning',
    },
  });
  for (const file of readdirSync(fresh)) {
    if (file.endsWith('.js')) writeFileSync(join(fresh, file), takeBuiltinsDirectly(readFileSync(join(fresh, file), 'utf8'), file));
  }
  const old = `${root}.dist-old-${tag}`;
  try {
    renameSync(`${root}dist`, old);
  } catch (error) {
    if (error.code !== 'ENOENT') throw error;
  }
  renameSync(fresh, `${root}dist`);
  rmSync(old, { recursive: true, force: true });
} finally {
  rmSync(fresh, { recursive: true, force: true });
}
// A clone's build ends as an install does: svc's modules compiled once into dist/compile-cache
// (bin/compile-cache.mjs). Not for the tarball (prepack's --clean): the cache is keyed to this folder.
if (!process.argv.includes('--clean')) await import('../bin/compile-cache.mjs');
