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
await import('../dist/cli.js');
