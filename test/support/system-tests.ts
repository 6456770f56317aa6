// The test files that need programs from the system, not from npm: they run in `npm run
// test:system` (vitest.system.config.ts), which `.ci/run` runs after installing them; `npm test`
// leaves them out, so it does not need them. A missing program fails
// its test rather than skipping it.
export const SYSTEM_TESTS = [
  // Debian's gh, logged in nowhere.
  'test/dispatch/pr/real-gh.test.ts',
  // Podman and Docker: real runner containers (npm run image first).
  'test/server/hosted-executor/podman-runner.test.ts',
  'test/server/hosted-executor/docker-runner.test.ts',
  'test/server/hosted-executor/executor-refusals.test.ts',
  // nftables (as root) and bubblewrap (svc's own user): the network fence of a leg.
  'test/dispatch/fence/fenced-leg.test.ts',
  'test/dispatch/fence/nft.test.ts',
  'test/dispatch/fence/resolved.test.ts',
  'test/commands/dispatch/network.test.ts',
  'test/commands/dispatch/network-user.test.ts',
  // nftables as root: runs through svc's default agent pool with the default network, fenced
  // (docs/trust.md), which a machine without nft refuses (test/package/bare-machine.test.ts).
  'test/commands/dispatch/attempts.test.ts',
  'test/commands/dispatch/run-base.test.ts',
  'test/commands/workflow/workflow.test.ts',
  'test/dispatch/boundary/agent-leftovers.test.ts',
  'test/examples/fleet-run.test.ts',
  'test/trust/agent-boundary.test.ts',
  'test/trust/agent-race.test.ts',
  'test/trust/agent-env.test.ts',
  // Podman and the runner's Debian base (npm run image first): npm ci && npm test on a bare machine.
  'test/package/bare-machine.test.ts',
];
