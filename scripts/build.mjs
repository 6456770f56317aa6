// Bundles the CLI into dist/ with esbuild, nothing more:
// - dist/cli.js is src/cli.ts with commander inlined; everything a command handler imports sits in
//   lazy chunks (code splitting), so `svc --help` loads no handler and `svc config get` no HTTP.
// - dist/server.js is the local service (src/server), for `svc server` and the tests.
// - Dependencies are bundled as they ship (their public entry points, untouched), so the package
//   installs none of them (package.json: they are devDependencies).
// Each build writes a fresh folder and swaps it in for dist/ in two renames: a test spawning
// bin/svc.js meanwhile sees the old build or the new one, and no chunk of an earlier build remains.
import { randomBytes } from 'node:crypto';
import { readFileSync, renameSync, rmSync } from 'node:fs';
import { build } from 'esbuild';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const root = new URL('..', import.meta.url).pathname;
const tag = `${process.pid}-${randomBytes(4).toString('hex')}`;
const fresh = `${root}.dist-${tag}`;

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
    // Bundled CommonJS dependencies (ajv, semver, …) call require() for Node's own modules.
    banner: { js: "const require = process.getBuiltinModule('node:module').createRequire(import.meta.url);" },
    // Whitespace and syntax only: names stay, and dist/*.js.map maps stack positions back to src/.
    minifyWhitespace: true,
    minifySyntax: true,
    sourcemap: 'linked',
    logLevel: 'warning',
    define: { __SVC_VERSION__: JSON.stringify(pkg.version) },
  });
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
