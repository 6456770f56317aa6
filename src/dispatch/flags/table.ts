// The flags of the dispatch commands, each declared once (row.ts): the commands add them to
// commander (src/commands/dispatch/register.ts) and take the parsed flags' type from them; the
// engine takes from the same rows the options they fill (`to`, of the row's kind), their defaults
// (`byDefault`, which the help line says), what run.json keeps for `continue` (`replay`), what
// `--hosted` refuses (`hosted`, docs/hosted.md#opening-a-hosted-run---hosted-what-travels) and what `svc attach` takes (`attach`).
// A flag the command acts on itself (`--hosted`, `--report`, the agent's) has only commander's part.
import { count, dollars, duration, oneOf, toggle, unlessNegated, variableNames, words } from './kinds.js';
import { flag, type FlagsOf, type OptionsOf } from './row.js';

const collect = (value: string, previous: string[] = []) => [...previous, value];

const WORKFLOW = (key: string) => () => `set ${key} in the repository's .svc/workflow.yml`;
const ATTEMPTS_STOP = () => "a hosted run's attempts stop once one won, and only the winner's svc/KEY is pushed";
const ATTACH = { where: 'attach' } as const;
/** Given more than once: one agent and one model travel, a second is an attempt's. */
const moreThanOnce = (what: string) => ({
  when: (v: unknown) => Array.isArray(v) && v.length > 1,
  as: `--${what} (more than once)`,
  where: () => `set attempts: in the repository's .svc/workflow.yml for best of N with the run's one ${what}`,
});
const ON_FAILURE = ['halt', 'continue'] as const;

/**
 * The flags every dispatch command takes, in help order; by name, for the commands that read one
 * of them (register.ts adds `agent` alone to the root help's tree).
 */
export const DISPATCH_FLAG = {
  project: flag('-p, --project <key>', 'project of next, batch and auto (SVC_PROJECT); a work item key names its own'),
  repo: flag('--repo <dir>', 'the git repository the agents work on (SVC_REPO; default: the current directory)', {
    attach: "the workspace the run's repositories are cloned into (SVC_REPO; default: the current directory)",
  }),
  agent: flag('--agent <name>', 'agent preset: claude, codex, aider, gemini, opencode (repeatable: attempt n of --attempts runs the n-th)', {
    parse: collect,
    attach: "agent preset (default: the run's agent): claude, codex, aider, gemini, opencode",
    hosted: moreThanOnce('agent'),
  }),
  agentCmd: flag('--agent-cmd <command>', 'any agent command; placeholders {prompt_file} {key} {workdir} {branch} {run_id}', {
    attach: true,
    hosted: { where: () => "set the runner's agent with svc server --hosted-agent-cmd (or svc attach --agent-cmd)" },
  }),
  agentFormat: flag(
    '--agent-format <name>',
    "parse an --agent-cmd's output as this preset's stream (outcome, spend, review text): claude, codex, gemini, opencode",
    { hosted: ATTACH },
  ),
  model: flag('--model <model>', 'model passed to the agent preset (repeatable: attempt n of --attempts runs the n-th)', {
    parse: collect,
    attach: "model passed to the agent preset (default: the run's model)",
    hosted: moreThanOnce('model'),
  }),
  agentEnv: flag('--agent-env <name>', "pass this variable of svc's environment to the agents too (repeatable; never SVC_TOKEN or SVC_RUN_TOKEN)", {
    parse: collect,
    to: 'agentEnv',
    kind: variableNames,
    optional: true,
    replay: true,
    attach: true,
    hosted: { where: WORKFLOW('env:') },
  }),
  agentUser: flag(
    '--agent-user <name>',
    "who agents run as when svc is root (SVC_AGENT_USER): a user, a uid range FIRST-LAST, or none (svc's own); default svc-agent-1, -2, …, a uid per leg",
    { attach: true, hosted: { where: () => 'the runner gives each agent a pool uid of its own' } },
  ),
  network: flag('--network <mode>', 'what a leg may reach (SVC_NETWORK): fenced (its allowlist only; default as root), none, or open', {
    choices: ['open', 'fenced', 'none'],
    attach: true,
    hosted: ATTACH,
  }),
  allowHost: flag(
    '--allow-host <host>',
    "a host a fenced leg may reach besides its agent's model API and the git host: a name, *.suffix or an address, with an optional :PORT (repeatable)",
    {
      parse: collect,
      attach:
        "a host a fenced leg may reach besides its agent's model API, the service and the git host: a name, *.suffix or an address, with an optional :PORT (repeatable)",
      hosted: { where: () => `${WORKFLOW('network: allow:')()} (or pass --allow-host to the runner's svc attach)` },
    },
  ),
  dryRun: flag('--dry-run', 'print the card set with skip reasons and open nothing', {
    to: 'dryRun',
    kind: toggle,
    attach: "print the run's legs, repositories and branches; execute nothing, mint no git token",
  }),
  max: flag('--max <n>', 'most cards to run', { to: 'maxCards', kind: count, orNull: true, optional: true }),
  onFailure: flag('--on-failure <mode>', (d) => `what a failed leg does to the run (default ${d}; continue follows the original run)`, {
    choices: ON_FAILURE,
    to: 'onFailure',
    kind: oneOf(ON_FAILURE),
    byDefault: 'halt',
    replay: true,
    attach: 'what a failed leg does to the run (default halt)',
    hosted: ATTACH,
  }),
  parallel: flag('--parallel <n>', 'legs run at once, each in its own worktree', {
    to: 'parallel',
    kind: count,
    byDefault: 1,
    config: 'parallel',
    replay: true,
    attach: true,
    hosted: ATTACH,
  }),
  idempotencyKey: flag('--idempotency-key <key>', 'find the same run again when a CI job is retried whole', {
    to: 'idempotencyKey',
    kind: words,
    optional: true,
  }),
  hosted: flag('--hosted', 'open the run for a hosted runner and print it instead of running it here'),
  timeout: flag('--timeout <duration>', 'whole-run time limit; the run closes timed_out', {
    to: 'timeouts.runMs',
    kind: duration,
    orNull: true,
    replay: true,
    attach: true,
    hosted: { where: () => "set the run's deadline with svc server --hosted-timeout (or svc attach --timeout)" },
  }),
  idleTimeout: flag('--idle-timeout <duration>', (d) => `stop an agent silent this long (default ${d})`, {
    to: 'timeouts.idleMs',
    kind: duration,
    byDefault: '15m',
    replay: true,
    attach: true,
    hosted: ATTACH,
  }),
  cardTimeout: flag('--card-timeout <duration>', (d) => `stop an agent running this long (default ${d})`, {
    to: 'timeouts.cardMs',
    kind: duration,
    byDefault: '60m',
    replay: true,
    attach: true,
    hosted: ATTACH,
  }),
  killGrace: flag('--kill-grace <duration>', (d) => `wait between SIGTERM and SIGKILL (default ${d})`, {
    to: 'timeouts.killGraceMs',
    kind: duration,
    byDefault: '10s',
    replay: true,
    attach: true,
    hosted: ATTACH,
  }),
  heartbeatInterval: flag('--heartbeat-interval <duration>', (d) => `heartbeat interval (SVC_HEARTBEAT_INTERVAL; default ${d})`, {
    to: 'heartbeatIntervalMs',
    kind: duration,
    byDefault: '60s',
    env: 'SVC_HEARTBEAT_INTERVAL',
    hosted: { where: () => 'a hosted run sends no heartbeat' },
  }),
  sendLogs: flag('--send-logs', 'send agent output to the service as event bodies (redacted)', {
    to: 'sendLogs',
    kind: toggle,
    byDefault: false,
    config: 'sendLogs',
    replay: true,
    attach: true,
    hosted: ATTACH,
  }),
  allowEmpty: flag('--allow-empty', 'a leg that leaves no commit is not failed', {
    to: 'allowEmpty',
    kind: toggle,
    replay: true,
    attach: true,
    hosted: ATTACH,
  }),
  maxCost: flag(
    '--max-cost <usd>',
    "start no new leg once the agents' streams report this much spend, then stop max (claude, opencode, or --agent-format claude|opencode)",
    {
      to: 'maxCostUsd',
      kind: dollars,
      orNull: true,
      optional: true,
      replay: true,
      attach: 'stop the run once the agents report this much spend',
      hosted: ATTACH,
    },
  ),
  noWorktree: flag('--no-worktree', 'run in place on the branch instead of a worktree per card', {
    to: 'worktree',
    kind: unlessNegated,
    replay: true,
    attach: 'run in place in the clone instead of a worktree per card',
    hosted: ATTACH,
  }),
  push: flag(
    '--push',
    "push an implemented leg's branch to origin with your git credentials (fix: fast-forward only; review never pushes; default on for hosted runs)",
    { attach: "push an implemented leg's branch (the default)", hosted: ATTACH },
  ),
  noPush: flag('--no-push', 'do not push implemented branches of a hosted run', { attach: "do not push implemented legs' branches", hosted: ATTACH }),
  noReconcile: flag('--no-reconcile', 'let a running leg finish when its item is closed, archived, handed to a human or moved out of scope', {
    attach: true,
    hosted: ATTACH,
  }),
  gitIdentity: flag(
    '--git-identity <"Name <email>">',
    "author of the agents' commits (default: the repository's, else yours, else svc-agent <svc-agent@localhost>)",
    { attach: true, hosted: ATTACH },
  ),
  report: flag('--report <format:file>', 'write a report when the run ends: junit, markdown, html or json (repeatable)', { parse: collect }),
  verify: flag('--verify <command>', "the check a leg must pass to count as implemented, over .svc/workflow.yml's verify", {
    hosted: { where: WORKFLOW('verify:') },
  }),
  noVerify: flag('--no-verify', "run no check (.svc/workflow.yml's verify is skipped)", { hosted: { where: WORKFLOW('verify:') } }),
  attempts: flag('--attempts <n>', 'best of N (1-8): N agents on each card side by side, the first to pass the check becomes svc/KEY (needs a verify)', {
    hosted: { where: WORKFLOW('attempts:') },
  }),
  pushAttempts: flag('--push-attempts', "with --push: push the other attempts' svc/KEY-attempt-N branches too", {
    to: 'pushAttempts',
    kind: toggle,
    optional: true,
    replay: true,
    hosted: { where: ATTEMPTS_STOP },
  }),
  allAttempts: flag('--all-attempts', 'let every attempt run to its end, not only until one passed the check', {
    to: 'allAttempts',
    kind: toggle,
    optional: true,
    replay: true,
    hosted: { where: ATTEMPTS_STOP },
  }),
  setup: flag('--setup <command>', "run this in each worktree before the agent, instead of .svc/workflow.yml's setup", {
    hosted: { where: WORKFLOW('setup:') },
  }),
};

/** next, batch and auto. */
export const RERUN_FLAGS = [
  flag('--rerun', 'also pick cards an earlier local run implemented whose svc/KEY branch still holds that work, or that have an open delivery', {
    to: 'rerun',
    kind: toggle,
    optional: true,
  }),
];

/** `--pr`, `--no-pr`, `--draft`, `--github-api-url` (docs/pull-requests.md); `svc attach` takes them too. */
export const PULL_REQUEST_FLAGS = [
  flag('--pr', 'open or update a pull request from svc/KEY after a pushed leg; review posts, fix comments (default on for hosted runs; implies --push)', {
    attach: true,
    hosted: ATTACH,
  }),
  flag('--no-pr', 'write no pull request, review or comment', { attach: true, hosted: ATTACH }),
  flag('--draft', 'open pull requests as drafts', { attach: true, hosted: ATTACH }),
  flag('--github-api-url <url>', "GitHub's REST API base (SVC_GITHUB_API_URL; default from the repository host)", {
    attach: true,
    hosted: { where: () => "set SVC_GITHUB_API_URL in the runner's environment (or svc attach --github-api-url)" },
  }),
];

export const AUTO_FLAGS = [
  flag('--retry-failed', 'do not skip cards that failed in recent local runs', { to: 'retryFailed', kind: toggle, optional: true }),
  flag('--recent-failures <duration>', (d) => `how far back a failure in a local run keeps its card out of auto (default ${d})`, {
    to: 'recentFailureWindowMs',
    kind: duration,
    byDefault: '24h',
    optional: true,
  }),
  flag('--per-run <n>', 'most cards in each of its runs: a fleet worker takes a few at a time and comes back for more', {
    to: 'perRun',
    kind: count,
    optional: true,
  }),
];

/** batch and auto: the ready lanes' filters. */
export const LANE_FLAGS = [
  flag('--priority <p>', 'only this priority (repeatable)', { parse: collect }),
  flag('--assignee <id>', 'only this assignee; `none` for unassigned'),
  flag('--sprint <id>', 'only this sprint, or `active`'),
  flag('--ancestor <key>', 'only leaves beneath this item (repeatable)', { parse: collect }),
  flag('--kind <kind>', 'only this kind (repeatable)', { parse: collect }),
];

export const DISPATCH_FLAGS = [...Object.values(DISPATCH_FLAG), ...RERUN_FLAGS, ...PULL_REQUEST_FLAGS, ...AUTO_FLAGS, ...LANE_FLAGS];

/** A row of the dispatch commands' table. */
export type DispatchRow = (typeof DISPATCH_FLAGS)[number];

/** Flags as commander parses them; the commands turn them into the engine's typed options. */
export type DispatchFlags = FlagsOf<typeof DISPATCH_FLAGS>;

/** The options of a run the rows fill (DispatchOptions has them, src/dispatch/options.ts). */
export type FlagOptions = OptionsOf<DispatchRow>;

/** What run.json keeps of them (`replay`), as written. */
export type ReplayedOptions = OptionsOf<Extract<DispatchRow, { replay: true }>, true>;
