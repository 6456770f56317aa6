// The test files that need programs from the system, not from npm: they run in `npm run
// test:system` (vitest.system.config.ts), which `.ci/run` runs after installing them; `npm test`
// leaves them out, so it does not need them. A missing program fails
// its test rather than skipping it.
export const SYSTEM_TESTS = [
  // tmux: svc on a real terminal.
  'test/tty/hostile-output.test.ts',
  'test/tty/progress.test.ts',
  // chromium: the report and the live page as a browser renders them.
  'test/report/html-browser.test.ts',
  'test/report/live-page.test.ts',
  // Debian's gh, logged in nowhere.
  'test/pr/real-gh.test.ts',
  // Podman and Docker: real runner containers (npm run image first).
  'test/hosted/podman-runner.test.ts',
  'test/hosted/docker-runner.test.ts',
  'test/hosted/executor-refusals.test.ts',
  // nftables (as root) and bubblewrap (svc's own user): the network fence of a leg.
  'test/dispatch/fence/fenced-leg.test.ts',
  'test/dispatch/fence/nft.test.ts',
  'test/dispatch/fence/resolved.test.ts',
  'test/cli/network.test.ts',
  'test/cli/network-user.test.ts',
];
