#!/usr/bin/env node
// Kept tiny on purpose: turn on Node's compile cache before anything else loads, then hand over.
import module from 'node:module';

module.enableCompileCache?.();
await import('../dist/cli.js');
