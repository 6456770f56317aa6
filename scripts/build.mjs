// Bundles the CLI into dist/ with code splitting, so command handlers imported lazily stay out of
// the start-up path. Dependencies stay external: node_modules is there at run time.
import { build } from 'esbuild';

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
});
