// `npm run test:system`: the tests that need programs from the system (test/support/system-tests.ts:
// gh, Podman, Docker, nftables, bubblewrap), with the suite's settings otherwise, one file at a
// time: the machine's nftables are one namespace for every file, and a fenced run in one file
// sweeps the stale tables another file planted to see `svc runs recover` (or its own sweep) remove
// them (test/commands/dispatch/network.test.ts, test/dispatch/fence/nft.test.ts).
import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';
import { SYSTEM_TESTS } from './test/support/system-tests.js';

export default defineConfig({ ...base, test: { ...base.test, include: SYSTEM_TESTS, exclude: ['**/node_modules/**'], fileParallelism: false } });
