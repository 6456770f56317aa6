// What `npm run test:system` (vitest.system.config.ts) runs and `npm test` leaves out, in two
// groups. `.ci/run` runs both suites; test/architecture/suites.test.ts keeps the line where it is
// drawn here.

// The test files that need programs from the system, not from npm: `.ci/run` installs them. They
// run one file at a time. A missing program fails its test rather than skipping it.
export const NEEDS_PROGRAMS = [
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

// The whole system: the files that start svc as a program of its own (bin/svc.js through
// support/cli.ts's runCli or trust/support.ts's spawnSvc, `svc server` through
// support/server-process.ts, the README's block through support/getting-started.ts, the machine's
// Node through support/machine-node.ts) or run whole legs, agent processes in git worktrees,
// through the engine's harness (support/engine.ts) or a hosted run (support/hosted.ts). A node
// start costs about 0.2 s of CPU, and a spawn from a test worker forks a process of ~300 MB (16 ms
// and more on this VM): together two thirds of what `npm test` cost on 2 cores. `npm test` keeps
// what runs in one process: the modules, the local service over real HTTP, and the commands
// in-process (support/svc-in-process.ts), git and a shell where they need them.
export const WHOLE_SYSTEM = [
  'test/api/first-contact.test.ts',
  'test/architecture/agent-bytes-path.test.ts',
  'test/cli/contract-commands.test.ts',
  'test/cli/e2e.test.ts',
  'test/cli/error-lines.test.ts',
  'test/cli/fleet.test.ts',
  'test/cli/jq.test.ts',
  'test/cli/json-shapes.test.ts',
  'test/cli/origin-ahead.test.ts',
  'test/cli/read.test.ts',
  'test/cli/readme.test.ts',
  'test/cli/run.test.ts',
  'test/cli/startup-builtins.test.ts',
  'test/cli/stdio.test.ts',
  'test/cli/user-git-config.test.ts',
  'test/commands/auth/auth.test.ts',
  'test/commands/dispatch/dirty-tree.test.ts',
  'test/commands/hosted/attach-cli.test.ts',
  'test/commands/hosted/hosted-agent.test.ts',
  'test/commands/logs/logs-readable.test.ts',
  'test/commands/runs/runs-local.test.ts',
  'test/commands/server/server-done.test.ts',
  'test/dispatch/agent/aider-standin.test.ts',
  'test/dispatch/boundary/uid-leftovers.test.ts',
  'test/dispatch/boundary/user.test.ts',
  'test/dispatch/git/review-fix-push.test.ts',
  'test/dispatch/git/user-git-config.test.ts',
  'test/dispatch/hosted/client-pieces.test.ts',
  'test/dispatch/hosted/contract-shapes.test.ts',
  'test/dispatch/hosted/engine.test.ts',
  'test/dispatch/hosted/hosted-run.test.ts',
  'test/dispatch/hosted/workflow.test.ts',
  'test/dispatch/lifecycle/auto-per-run.test.ts',
  'test/dispatch/lifecycle/commands.test.ts',
  'test/dispatch/lifecycle/cost-and-advance.test.ts',
  'test/dispatch/lifecycle/existing-run.test.ts',
  'test/dispatch/lifecycle/fleet-git.test.ts',
  'test/commands/dispatch/start-git.test.ts',
  'test/dispatch/lifecycle/honest-outcomes.test.ts',
  'test/dispatch/lifecycle/lifecycle.test.ts',
  'test/dispatch/lifecycle/open-close.test.ts',
  'test/dispatch/lifecycle/queue-sharing.test.ts',
  'test/dispatch/lifecycle/reconcile.test.ts',
  'test/dispatch/pr/dispatch-pr.test.ts',
  'test/dispatch/pr/hosted-pr-cli.test.ts',
  'test/dispatch/pr/local-cli.test.ts',
  'test/dispatch/report/cli.test.ts',
  'test/dispatch/select/select.test.ts',
  'test/dispatch/wire/wire.test.ts',
  'test/dispatch/workflow/attempts.test.ts',
  'test/dispatch/workflow/check-integrity.test.ts',
  'test/dispatch/workflow/leg-ports.test.ts',
  'test/dispatch/workflow/legs.test.ts',
  'test/dispatch/workflow/protect.test.ts',
  'test/package/compile-cache.test.ts',
  'test/package/launcher.test.ts',
  'test/package/node-guard.test.ts',
  'test/package/pack.test.ts',
  'test/server/git/git-remote.test.ts',
  'test/server/hosted-executor/runner-logs.test.ts',
  'test/server/web/live-page.test.ts',
  'test/trust/cli-input.test.ts',
  'test/trust/crash.test.ts',
  'test/trust/disk-full.test.ts',
  'test/trust/git-config-credentials.test.ts',
  'test/trust/live-run.test.ts',
  'test/trust/max-wait.test.ts',
  'test/trust/secrets.test.ts',
  'test/trust/shared-queue.test.ts',
  'test/ui/control-characters.test.ts',
  'test/ui/hostile-output.test.ts',
  'test/ui/pipe.test.ts',
  'test/ui/progress.test.ts',
  'test/ui/zero-columns.test.ts',
];

export const SYSTEM_TESTS = [...NEEDS_PROGRAMS, ...WHOLE_SYSTEM];
