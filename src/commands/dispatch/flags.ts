// The flags of the dispatch commands, each declared once (flag-table.ts): register.ts adds them to
// the commands, and the handlers take the types derived from them.
import type { RecordedOptions } from '../../dispatch/options.js';
import { flag, type FlagsOf } from '../flag-table.js';

const collect = (value: string, previous: string[] = []) => [...previous, value];

/**
 * What a flag that was not given (nor set in the environment or the config) stands for: the help
 * lines say it, the options take it (run-options.ts), and so do the demo and a hosted run.
 */
export const DISPATCH_DEFAULTS = {
  onFailure: 'halt',
  parallel: 1,
  sendLogs: false,
  idleTimeout: '15m',
  cardTimeout: '60m',
  killGrace: '10s',
  heartbeatInterval: '60s',
} as const;
const D = DISPATCH_DEFAULTS;

/**
 * The flags every dispatch command takes, in help order; by name, for `svc attach`, which takes
 * some of them (hosted/register.ts).
 */
export const DISPATCH_FLAG = {
  project: flag('-p, --project <key>', 'project of next, batch and auto (SVC_PROJECT); a work item key names its own'),
  repo: flag('--repo <dir>', 'the git repository the agents work on (SVC_REPO; default: the current directory)'),
  agent: flag('--agent <name>', 'agent preset: claude, codex, aider, gemini, opencode (repeatable: attempt n of --attempts runs the n-th)', {
    parse: collect,
  }),
  agentCmd: flag('--agent-cmd <command>', 'any agent command; placeholders {prompt_file} {key} {workdir} {branch} {run_id}'),
  agentFormat: flag(
    '--agent-format <name>',
    "parse an --agent-cmd's output as this preset's stream (outcome, spend, review text): claude, codex, gemini, opencode",
  ),
  model: flag('--model <model>', 'model passed to the agent preset (repeatable: attempt n of --attempts runs the n-th)', { parse: collect }),
  agentEnv: flag('--agent-env <name>', "pass this variable of svc's environment to the agents too (repeatable; never SVC_TOKEN or SVC_RUN_TOKEN)", {
    parse: collect,
  }),
  agentUser: flag(
    '--agent-user <name>',
    "who agents run as when svc is root (SVC_AGENT_USER): a user, a uid range FIRST-LAST, or none (svc's own); default svc-agent-1, -2, …, a uid per leg",
  ),
  network: flag('--network <mode>', 'what a leg may reach (SVC_NETWORK): fenced (its allowlist only; default as root), none, or open', {
    choices: ['open', 'fenced', 'none'],
  }),
  allowHost: flag(
    '--allow-host <host>',
    "a host a fenced leg may reach besides its agent's model API and the git host: a name, *.suffix or an address, with an optional :PORT (repeatable)",
    { parse: collect },
  ),
  dryRun: flag('--dry-run', 'print the card set with skip reasons and open nothing'),
  max: flag('--max <n>', 'most cards to run'),
  onFailure: flag('--on-failure <mode>', `what a failed leg does to the run (default ${D.onFailure}; continue follows the original run)`, {
    choices: ['halt', 'continue'],
  }),
  parallel: flag('--parallel <n>', 'legs run at once, each in its own worktree'),
  idempotencyKey: flag('--idempotency-key <key>', 'find the same run again when a CI job is retried whole'),
  hosted: flag('--hosted', 'open the run for a hosted runner and print it instead of running it here'),
  timeout: flag('--timeout <duration>', 'whole-run time limit; the run closes timed_out'),
  idleTimeout: flag('--idle-timeout <duration>', `stop an agent silent this long (default ${D.idleTimeout})`),
  cardTimeout: flag('--card-timeout <duration>', `stop an agent running this long (default ${D.cardTimeout})`),
  killGrace: flag('--kill-grace <duration>', `wait between SIGTERM and SIGKILL (default ${D.killGrace})`),
  heartbeatInterval: flag('--heartbeat-interval <duration>', `heartbeat interval (SVC_HEARTBEAT_INTERVAL; default ${D.heartbeatInterval})`),
  sendLogs: flag('--send-logs', 'send agent output to the service as event bodies (redacted)'),
  allowEmpty: flag('--allow-empty', 'a leg that leaves no commit is not failed'),
  maxCost: flag(
    '--max-cost <usd>',
    "start no new leg once the agents' streams report this much spend, then stop max (claude, opencode, or --agent-format claude|opencode)",
  ),
  noWorktree: flag('--no-worktree', 'run in place on the branch instead of a worktree per card'),
  push: flag(
    '--push',
    "push an implemented leg's branch to origin with your git credentials (fix: fast-forward only; review never pushes; default on for hosted runs)",
  ),
  noPush: flag('--no-push', 'do not push implemented branches of a hosted run'),
  noReconcile: flag('--no-reconcile', 'let a running leg finish when its item is closed, archived, handed to a human or moved out of scope'),
  gitIdentity: flag(
    '--git-identity <"Name <email>">',
    "author of the agents' commits (default: the repository's, else yours, else svc-agent <svc-agent@localhost>)",
  ),
  report: flag('--report <format:file>', 'write a report when the run ends: junit, markdown, html or json (repeatable)', { parse: collect }),
  verify: flag('--verify <command>', "the check a leg must pass to count as implemented, over .svc/workflow.yml's verify"),
  noVerify: flag('--no-verify', "run no check (.svc/workflow.yml's verify is skipped)"),
  attempts: flag('--attempts <n>', 'best of N (1-8): N agents on each card side by side, the first to pass the check becomes svc/KEY (needs a verify)'),
  pushAttempts: flag('--push-attempts', "with --push: push the other attempts' svc/KEY-attempt-N branches too"),
  allAttempts: flag('--all-attempts', 'let every attempt run to its end, not only until one passed the check'),
  setup: flag('--setup <command>', "run this in each worktree before the agent, instead of .svc/workflow.yml's setup"),
};

/** next, batch and auto. */
export const RERUN_FLAGS = [
  flag('--rerun', 'also pick cards an earlier local run implemented whose svc/KEY branch still holds that work, or that have an open delivery'),
];

/** `--pr`, `--no-pr`, `--draft`, `--github-api-url` (docs/pull-requests.md); `svc attach` takes them too. */
export const PULL_REQUEST_FLAGS = [
  flag('--pr', 'open or update a pull request from svc/KEY after a pushed leg; review posts, fix comments (default on for hosted runs; implies --push)'),
  flag('--no-pr', 'write no pull request, review or comment'),
  flag('--draft', 'open pull requests as drafts'),
  flag('--github-api-url <url>', "GitHub's REST API base (SVC_GITHUB_API_URL; default from the repository host)"),
];

export const AUTO_FLAGS = [
  flag('--retry-failed', 'do not skip cards that failed in recent local runs'),
  flag('--per-run <n>', 'most cards in each of its runs: a fleet worker takes a few at a time and comes back for more'),
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

/** Flags as commander parses them; run-dispatch.ts turns them into the engine's typed options. */
export type DispatchFlags = FlagsOf<typeof DISPATCH_FLAGS>;

const asFlag = (v: number | undefined) => (v === undefined ? undefined : String(v));
const onlyTrue = (v: boolean | undefined) => (v === true ? true : undefined);
const asDuration = (ms: number | null | undefined) => (ms !== null && ms !== undefined && ms > 0 ? `${Math.round(ms)}ms` : undefined);

/**
 * The flags `continue RUN_ID` takes from its original run where the user passes none, each from
 * what run.json recorded (continue-flags.ts; the agent's flags are read there).
 */
export const REPLAYED: { [K in keyof DispatchFlags]?: (r: Partial<RecordedOptions>) => DispatchFlags[K] | undefined } = {
  attempts: (r) => asFlag(r.attempts),
  allAttempts: (r) => onlyTrue(r.allAttempts),
  pushAttempts: (r) => onlyTrue(r.pushAttempts),
  onFailure: (r) => r.onFailure,
  parallel: (r) => asFlag(r.parallel),
  sendLogs: (r) => r.sendLogs,
  allowEmpty: (r) => onlyTrue(r.allowEmpty),
  maxCost: (r) => asFlag(r.maxCostUsd ?? undefined),
  worktree: (r) => (r.worktree === false ? false : undefined),
  // The workflow's flags of the original run (.svc/workflow.yml itself is read again from the base).
  verify: (r) => r.verify,
  setup: (r) => r.setup,
  // The names the original run passed to its agents (their values are read from this environment).
  agentEnv: (r) => r.agentEnv,
  // A continued run pushes, and writes pull requests, as the original did.
  push: (r) => onlyTrue(r.push),
  pr: (r) => onlyTrue(r.pr),
  draft: (r) => onlyTrue(r.draft),
  idleTimeout: (r) => asDuration(r.timeouts?.idleMs),
  cardTimeout: (r) => asDuration(r.timeouts?.cardMs),
  killGrace: (r) => asDuration(r.timeouts?.killGraceMs),
  timeout: (r) => asDuration(r.timeouts?.runMs),
};
