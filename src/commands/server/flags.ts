// The flags of `svc server` and its subcommands, each declared once (flag-table.ts): register.ts
// adds them to the commands, and the handlers take the types derived from them.
import { EXIT } from '../exit-codes.js';
import { flag, type FlagsOf, rephrase } from '../flag-table.js';

const port = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65535)
    throw Object.assign(new Error(`--port takes 0-65535, got '${v}'`), { code: 'commander.invalidArgument', exitCode: EXIT.usage });
  return n;
};

export const SERVE_FLAGS = [
  flag('--port <port>', 'port to listen on (0 picks a free one)', { parse: port, default: 8787 }),
  flag('--host <host>', 'address to listen on', { default: '127.0.0.1' }),
  flag('--db <file>', 'SQLite database file (default: in memory)'),
  flag('--seed <name>', 'seed a demo workspace, project and token', { choices: ['demo'] }),
  flag('--rate-limit <n/seconds>', 'per-token rate limit, e.g. 600/60'),
  flag('--git-root <dir>', 'folder of bare repositories (<dir>/<owner>/<name>.git) served to hosted runs over smart HTTP'),
  flag('--hosted-executor <engine>', 'start a runner container for each hosted run opened (default: none)', { choices: ['podman', 'docker', 'kubernetes'] }),
  flag('--hosted-image <ref>', 'the runner image (default localhost/svc:<version of svc>, built by npm run image)'),
  flag('--hosted-agent-cmd <cmd>', 'the agent command runners use for runs that name no agent preset'),
  flag('--hosted-base-url <url>', "SVC_BASE_URL as runners reach this service (default: the service's own URL)"),
  flag('--hosted-timeout <duration>', "a hosted run's deadline: its runner is stopped and the run closed timed_out (default 60m)"),
  flag('--hosted-logs <dir>', "where runners' logs are kept (default: <db>.runners beside --db; in memory, a temp folder removed at stop)"),
  flag('--hosted-network <name>', "podman/docker: the network runners join (default bridge: a namespace of each runner's own; never host)"),
  flag('--kubeconfig <file>', 'kubernetes: the kubeconfig to use (default KUBECONFIG or ~/.kube/config)'),
  flag('--hosted-namespace <ns>', "kubernetes: the Jobs' namespace (default the context's, else default)"),
  flag('--hosted-requests <list>', 'kubernetes: resource requests of the runner, e.g. cpu=500m,memory=512Mi'),
  flag('--hosted-limits <list>', 'kubernetes: resource limits of the runner, e.g. cpu=2,memory=2Gi'),
  flag('--hosted-poll <duration>', "kubernetes: how often a running Job's status is read (default 5s)"),
  flag('--dry-run', 'with --hosted-executor: print what each hosted run would start (a command line, or YAML manifests) and start nothing'),
];
/** `svc server`'s flags as commander parses them; serve.ts turns them into the service's options. */
export type ServeFlags = FlagsOf<typeof SERVE_FLAGS>;

/** The subcommands' `--db`: required, but checked by dbOf (see there). */
const DB = flag('--db <file>', 'the SQLite database of the service (required)');

export const TOKEN_CREATE_FLAGS = [
  DB,
  flag('--workspace <id-or-slug>', 'the workspace the token is bound to', { required: true }),
  flag('--project <key>', 'narrow the token to one project'),
  flag('--scopes <list>', 'comma-separated: project:browse,work_item:edit,sprint:manage,ai:plan (default all)'),
  flag('--user <id-or-email>', 'the member the token acts as (default the first member)'),
  flag('--expires-at <date-time>', 'expiry, UTC ending in Z'),
];
/** `svc server token create`'s flags; token-create.ts takes them with the `--db` found. */
export type TokenCreateFlags = FlagsOf<typeof TOKEN_CREATE_FLAGS>;

export const RUN_TOKEN_FLAGS = [DB, flag('--contract-prefix', "mint it as svc_pat_… (the contract's one bearer prefix) instead of svc_run_…")];

export const DONE_FLAGS = [DB, flag('--status <status>', 'the done status to set: done or cancelled', { default: 'done' })];

export const INIT_FLAGS = [
  rephrase(DB, 'the SQLite database of the service (required; made if missing)'),
  flag('--workspace <slug>', 'the workspace, by its slug (made if missing)', { required: true }),
  flag('--project <key>', 'the project key, e.g. PROJ (made if missing)', { required: true }),
  flag('--name <name>', 'the name of a project made now (default: its key)'),
  flag('--repo <url>', "a target repository of the project's items (repeatable): owner/name, https:// or ssh URL", {
    parse: (v: string, all: string[] = []) => [...all, v],
  }),
];

const pullRequestNumber = (v: string) => {
  if (!/^[1-9][0-9]*$/.test(v))
    throw Object.assign(new Error(`--number takes a pull request number (1 or more), got '${v}'`), { code: 'commander.invalidArgument', exitCode: EXIT.usage });
  return Number(v);
};

export const DELIVERY_FLAGS = [
  DB,
  flag('--number <n>', 'the pull request number', { parse: pullRequestNumber, required: true }),
  flag('--state <state>', 'the pull request state', { choices: ['open', 'merged', 'closed'], default: 'open' }),
  flag('--ci <ci>', 'its checks', { choices: ['passing', 'failing', 'running'] }),
  flag('--url <url>', "its web address (default: the repository's /pull/N)"),
];
