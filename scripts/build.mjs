// Bundles the CLI into dist/ with code splitting, so command handlers imported lazily stay out of
// the start-up path. Dependencies stay external: node_modules is there at run time.
import { readFileSync } from 'node:fs';
import { build } from 'esbuild';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));

await build({
  entryPoints: { cli: 'src/cli.ts', server: 'src/server/index.ts' },
  outdir: 'dist',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node22',
  packages: 'external',
  sourcemap: 'linked',
  logLevel: 'warning',
  define: { __SVC_VERSION__: JSON.stringify(pkg.version) },
});
