// `npm run test:agents`: the real agent CLIs through `svc run` against the mock model. Kept out of
// `npm test` (vitest.config.ts excludes test/agents): it installs four CLIs and runs real agents.
import { defineConfig } from 'vitest/config';
import { TEST_GIT_ENV } from '../support/git-env.js';

export default defineConfig({
  test: {
    root: new URL('../..', import.meta.url).pathname,
    include: ['test/agents/**/*.test.ts'],
    // The run's temp folder first (test/support/run-tmp.ts), so the agents' setup makes nothing outside it.
    globalSetup: ['test/support/run-tmp.ts', 'test/agents/setup.ts'],
    testTimeout: 300_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Git reads the suite's own configuration, not the machine's (test/support/gitconfig).
    env: TEST_GIT_ENV,
    // Two cores: two agents at a time, each scenario one after the other within its file.
    maxWorkers: 2,
  },
});
