import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The real agent CLIs run only in `npm run test:agents` (test/agents/vitest.config.ts).
    exclude: ['test/agents/**', '**/node_modules/**'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
});
