#!/usr/bin/env node
// Kept tiny on purpose: turn on Node's compile cache before anything else loads, then hand over.
import module from 'node:module';

module.enableCompileCache?.();
const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  // The one answer that needs none of the program: the version the package declares.
  const { readFileSync } = await import('node:fs');
  process.stdout.write(`${JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version}\n`);
} else {
  await import('../dist/cli.js');
}
