#!/usr/bin/env node
// Node older than svc needs: one line and exit 2 before the program loads (it would fail in odd
// ways: no node:sqlite, no process.getBuiltinModule). Old syntax on purpose, so any Node parses it.
var v = process.versions.node.split('.').map(Number);
if (v[0] < 22 || (v[0] === 22 && v[1] < 13)) {
  process.stderr.write('svc: needs Node.js 22.13 or newer; this is Node.js ' + process.versions.node + '\n');
  process.exit(2);
}
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
