// `npm run test:agents`: the real agent CLIs through `svc run` against the mock model. Kept out of
// `npm test` (vitest.config.ts excludes test/agents): it installs four CLIs and runs real agents.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    root: new URL('../..', import.meta.url).pathname,
    include: ['test/agents/**/*.test.ts'],
    globalSetup: ['test/agents/setup.ts'],
    testTimeout: 300_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Git in the tests (fixtures, the engine in-process, spawned svc and agents) reads this global
    // configuration, not the machine's: see test/support/gitconfig.
    env: { GIT_CONFIG_GLOBAL: fileURLToPath(new URL('../support/gitconfig', import.meta.url)), GIT_CONFIG_NOSYSTEM: '1' },
    // Two cores: two agents at a time, each scenario one after the other within its file.
    maxWorkers: 2,
  },
});
