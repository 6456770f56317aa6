// The eight dispatch commands share one set of flags; each differs only in its arguments and the
// card set the engine selects (DISPATCH.md §4).
import { type Command, Option } from 'commander';
import type { DispatchCommand } from '../../contract/types.js';
import type { Context } from '../context.js';
import { withExamples } from '../examples.js';

/** Flags as commander parses them; run-dispatch.ts turns them into the engine's typed options. */
export interface DispatchFlags {
  project?: string;
  repo?: string;
  agent?: string;
  agentCmd?: string;
  agentFormat?: string;
  model?: string;
  agentUser?: string;
  dryRun?: boolean;
  max?: string;
  onFailure?: 'halt' | 'continue';
  parallel?: string;
  idempotencyKey?: string;
  hosted?: boolean;
  timeout?: string;
  idleTimeout?: string;
  cardTimeout?: string;
  killGrace?: string;
  heartbeatInterval?: string;
  sendLogs?: boolean;
  allowEmpty?: boolean;
  maxCost?: string;
  worktree?: boolean;
  push?: boolean;
  pr?: boolean;
  draft?: boolean;
  githubApiUrl?: string;
  retryFailed?: boolean;
  perRun?: string;
  rerun?: boolean;
  priority?: string[];
  assignee?: string;
  sprint?: string;
  ancestor?: string[];
  kind?: string[];
  report?: string[];
  /** `--verify CMD`, or false for `--no-verify` (.svc/workflow.yml's check). */
  verify?: string | false;
  setup?: string;
}

interface Spec {
  name: DispatchCommand;
  args: string;
  summary: string;
  examples: string[];
  lanes?: boolean;
}

const SPECS: Spec[] = [
  { name: 'next', args: '', summary: 'run the next unit of ready work: the first runnable container, else the first ready bug group', examples: ['svc next --agent claude', 'svc next --dry-run'] },
  { name: 'run', args: '<keys...>', summary: 'run exactly the named work items, in that order', examples: ['svc run PROJ-12 --agent-cmd "./agent.sh {prompt_file}"', 'svc run PROJ-12 PROJ-14 --agent codex --parallel 2'] },
  { name: 'run_scope', args: '<key>', summary: 'run every live leaf beneath KEY in tree order, then the close-out prompt', examples: ['svc run_scope PROJ-3 --agent claude', 'svc run_scope PROJ-3 --dry-run'] },
  { name: 'batch', args: '', summary: 'run the ready leaves, up to --max (cards already implemented on svc/KEY, or with an open delivery, are skipped unless --rerun)', examples: ['svc batch --max 5 --priority high --agent claude', 'svc batch --ancestor PROJ-1 --dry-run'], lanes: true },
  { name: 'auto', args: '', summary: 'open runs over the ready leaves until nothing is ready or --max is reached (skips work already done, unless --rerun)', examples: ['svc auto --max 20 --agent claude --on-failure continue'], lanes: true },
  { name: 'fix', args: '<keys...>', summary: 'fix the failing pull requests of the named items: on the pull request\'s head fetched from origin; --push pushes the fix there (fast-forward only)', examples: ['svc fix PROJ-12 --agent claude'] },
  { name: 'continue', args: '<run-id>', summary: 'run again the legs of a run that did not end implemented', examples: ['svc continue 01J9ZK3RUN --agent claude'] },
  { name: 'review', args: '<keys...>', summary: 'review the open pull requests of the named items on their fetched head; the agent\'s final message is the result; a leg that changes files fails (kept on svc/review/KEY/RUN); never pushes', examples: ['svc review PROJ-12 --agent claude'] },
];

const collect = (value: string, previous: string[] = []) => [...previous, value];

export function registerDispatch(program: Command, context: (cmd: Command) => Context): void {
  for (const spec of SPECS) {
    const cmd = program.command(`${spec.name}${spec.args ? ` ${spec.args}` : ''}`).description(spec.summary);
    if (spec.name === 'run_scope') cmd.alias('run-scope');
    addDispatchFlags(cmd, spec);
    withExamples(cmd, ...spec.examples);
    cmd.action(async (...argv: unknown[]) => {
      const command = argv[argv.length - 1] as Command;
      const positional = spec.args ? (argv[0] as string | string[]) : [];
      const { runDispatchCommand } = await import('./run-dispatch.js');
      await runDispatchCommand({ ...command.opts<DispatchFlags>(), command: spec.name, keys: ([] as string[]).concat(positional) }, context(command));
    });
  }
}

function addDispatchFlags(cmd: Command, spec: Spec): void {
  cmd
    .option('-p, --project <key>', 'project of next, batch and auto (SVC_PROJECT); a work item key names its own')
    .option('--repo <dir>', 'the git repository the agents work on (SVC_REPO; default: the current directory)')
    .option('--agent <name>', 'agent preset: claude, codex, aider, gemini, opencode')
    .option('--agent-cmd <command>', 'any agent command; placeholders {prompt_file} {key} {workdir} {branch} {run_id}')
    .option('--agent-format <name>', 'parse an --agent-cmd\'s output as this preset\'s stream (outcome, spend, review text): claude, codex, gemini, opencode')
    .option('--model <model>', 'model passed to the agent preset')
    .option('--agent-user <name>', 'who agents run as when svc is root (SVC_AGENT_USER): a user, a uid range FIRST-LAST, or none (svc\'s own); default svc-agent-1, -2, …, a uid per leg')
    .option('--dry-run', 'print the card set with skip reasons and open nothing')
    .option('--max <n>', 'most cards to run')
    .addOption(new Option('--on-failure <mode>', 'what a failed leg does to the run (default halt; continue follows the original run)').choices(['halt', 'continue']))
    .option('--parallel <n>', 'legs run at once, each in its own worktree')
    .option('--idempotency-key <key>', 'find the same run again when a CI job is retried whole')
    .option('--hosted', 'open the run for a hosted runner and print it instead of running it here')
    .option('--timeout <duration>', 'whole-run time limit; the run closes timed_out')
    .option('--idle-timeout <duration>', 'stop an agent silent this long (default 15m)')
    .option('--card-timeout <duration>', 'stop an agent running this long (default 60m)')
    .option('--kill-grace <duration>', 'wait between SIGTERM and SIGKILL (default 10s)')
    .option('--heartbeat-interval <duration>', 'heartbeat interval (SVC_HEARTBEAT_INTERVAL; default 60s)')
    .option('--send-logs', 'send agent output to the service as event bodies (redacted)')
    .option('--allow-empty', 'a leg that leaves no commit is not failed')
    .option('--max-cost <usd>', 'start no new leg once the agents\' streams report this much spend, then stop max (claude, opencode, or --agent-format claude|opencode)')
    .option('--no-worktree', 'run in place on the branch instead of a worktree per card')
    .option('--push', 'push an implemented leg\'s branch to origin with your git credentials (fix: fast-forward only; review never pushes; default on for hosted runs)')
    .option('--no-push', 'do not push implemented branches of a hosted run')
    .option('--report <format:file>', 'write a report when the run ends: junit, markdown, html or json (repeatable)', collect)
    .option('--verify <command>', 'the check a leg must pass to count as implemented, over .svc/workflow.yml\'s verify')
    .option('--no-verify', 'run no check (.svc/workflow.yml\'s verify is skipped)')
    .option('--setup <command>', 'run this in each worktree before the agent, instead of .svc/workflow.yml\'s setup');
  if (spec.name === 'next' || spec.name === 'batch' || spec.name === 'auto') {
    cmd.option('--rerun', 'also pick cards an earlier local run implemented whose svc/KEY branch still holds that work, or that have an open delivery');
  }
  addPullRequestFlags(cmd);
  if (spec.name === 'auto') {
    cmd
      .option('--retry-failed', 'do not skip cards that failed in recent local runs')
      .option('--per-run <n>', 'most cards in each of its runs: a fleet worker takes a few at a time and comes back for more');
  }
  if (spec.lanes) {
    cmd
      .option('--priority <p>', 'only this priority (repeatable)', collect)
      .option('--assignee <id>', 'only this assignee; `none` for unassigned')
      .option('--sprint <id>', 'only this sprint, or `active`')
      .option('--ancestor <key>', 'only leaves beneath this item (repeatable)', collect)
      .option('--kind <kind>', 'only this kind (repeatable)', collect);
  }
}

/** `--pr`, `--no-pr`, `--draft`, `--github-api-url` (docs/pull-requests.md); `svc attach` takes them too. */
export function addPullRequestFlags(cmd: Command): Command {
  return cmd
    .option('--pr', 'open or update a pull request from svc/KEY after a pushed leg; review posts, fix comments (default on for hosted runs; implies --push)')
    .option('--no-pr', 'write no pull request, review or comment')
    .option('--draft', 'open pull requests as drafts')
    .option('--github-api-url <url>', "GitHub's REST API base (SVC_GITHUB_API_URL; default from the repository host)");
}
