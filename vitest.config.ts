import { defineConfig } from 'vitest/config';
import { TEST_GIT_ENV } from './test/support/git-env.js';
import { SYSTEM_TESTS } from './test/support/system-tests.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The real agent CLIs run only in `npm run test:agents` (test/agents/vitest.config.ts), and
    // what needs programs of the system or starts svc as a program of its own only in `npm run
    // test:system` (vitest.system.config.ts, test/support/system-tests.ts).
    exclude: ['test/agents/**', '**/node_modules/**', ...SYSTEM_TESTS],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Git reads the suite's own configuration, not the machine's (test/support/gitconfig).
    env: TEST_GIT_ENV,
    // Test files share their workers: starting a fresh worker per file (spawn, transform, the
    // imports of src/) cost ~1.1 s each, over 120 files most of the suite's time on 2 cores. Tests
    // close what they open and keep their state in their own folders, ports and projects; stubs of
    // globals and env are undone after each test.
    isolate: false,
    unstubGlobals: true,
    unstubEnvs: true,
    setupFiles: ['test/support/unstub.ts'],
    // One temp folder for the run, removed at its end: what tests make in os.tmpdir() goes there.
    globalSetup: ['test/support/run-tmp.ts'],
    // GitHub's workflow parser imports its JSON schema without `with { type: 'json' }`, which Node
    // refuses: vitest transforms it instead (test/examples/fleets.test.ts).
    server: { deps: { inline: ['@actions/workflow-parser'] } },
    // Many tests wait on child processes (agents, git, a spawned svc): four workers keep two cores
    // busy where vitest's default (cores - 1) would run one file at a time; three left them idle
    // more often (the whole suite 94 s with three, 89 s with four, on the 2-core machine; 147 s and
    // 142 s on 2026-12-02 with nothing else running). Beside other builds four cost more CPU and
    // gained nothing.
    maxWorkers: 4,
    // `npm run coverage`: lines of src/ run by the tests in-process (a spawned bin/svc.js runs the
    // bundle in dist/, which is not counted).
    coverage: { provider: 'v8', include: ['src/**'], reporter: ['text-summary', 'json-summary'] },
  },
});
