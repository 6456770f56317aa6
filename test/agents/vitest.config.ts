// `npm run test:agents`: the real agent CLIs through `svc run` against the mock model. Kept out of
// `npm test` (vitest.config.ts excludes test/agents): it installs four CLIs and runs real agents.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    root: new URL('../..', import.meta.url).pathname,
    include: ['test/agents/**/*.test.ts'],
    globalSetup: ['test/agents/setup.ts'],
    testTimeout: 300_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Two cores: two agents at a time, each scenario one after the other within its file.
    maxWorkers: 2,
  },
});
