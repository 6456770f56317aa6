// `npm run test:system`: the tests that need programs from the system (test/support/system-tests.ts:
// gh, Podman, Docker, nftables, bubblewrap), with the suite's settings otherwise.
import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';
import { SYSTEM_TESTS } from './test/support/system-tests.js';

export default defineConfig({ ...base, test: { ...base.test, include: SYSTEM_TESTS, exclude: ['**/node_modules/**'] } });
