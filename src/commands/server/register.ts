// `svc server`: the local service. The commands module only parses flags; the service's own
// runServerCommand does the work (the server depends on the contract alone, never on the CLI).
import type { Command } from 'commander';
import type { Context } from '../context.js';
import { EXIT } from '../exit-codes.js';
import { withExamples } from '../examples.js';
import { addFlags, flag, type FlagsOf, flagsOf, rephrase } from '../flag-table.js';

const port = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw Object.assign(new Error(`--port takes 0-65535, got '${v}'`), { code: 'commander.invalidArgument', exitCode: EXIT.usage });
  return n;
};

const SERVE_FLAGS = [
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
  flag('--hosted-logs <dir>', "where runners' logs are kept (default: a fresh folder in the temp folder)"),
  flag('--hosted-network <name>', 'podman/docker: the network runners join (default host, so they reach a loopback service)'),
  flag('--hosted-as-root', "podman/docker: the runner runs as root in its container, so svc runs each agent as a uid of its own (default: the image's non-root user)"),
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

const TOKEN_CREATE_FLAGS = [
  DB,
  flag('--workspace <id-or-slug>', 'the workspace the token is bound to', { required: true }),
  flag('--project <key>', 'narrow the token to one project'),
  flag('--scopes <list>', 'comma-separated: project:browse,work_item:edit,sprint:manage,ai:plan (default all)'),
  flag('--user <id-or-email>', 'the member the token acts as (default the first member)'),
  flag('--expires-at <date-time>', 'expiry, UTC ending in Z'),
];
/** `svc server token create`'s flags; token-create.ts takes them with the `--db` found. */
export type TokenCreateFlags = FlagsOf<typeof TOKEN_CREATE_FLAGS>;

const RUN_TOKEN_FLAGS = [DB, flag('--contract-prefix', 'mint it as svc_pat_… (the contract\'s one bearer prefix) instead of svc_run_…')];

const DONE_FLAGS = [DB, flag('--status <status>', 'the done status to set: done or cancelled', { default: 'done' })];

const INIT_FLAGS = [
  rephrase(DB, 'the SQLite database of the service (required; made if missing)'),
  flag('--workspace <slug>', 'the workspace, by its slug (made if missing)', { required: true }),
  flag('--project <key>', 'the project key, e.g. PROJ (made if missing)', { required: true }),
  flag('--name <name>', 'the name of a project made now (default: its key)'),
  flag('--repo <url>', 'a target repository of the project\'s items (repeatable): owner/name, https:// or ssh URL', { parse: (v: string, all: string[] = []) => [...all, v] }),
];

const pullRequestNumber = (v: string) => {
  if (!/^[1-9][0-9]*$/.test(v)) throw Object.assign(new Error(`--number takes a pull request number (1 or more), got '${v}'`), { code: 'commander.invalidArgument', exitCode: EXIT.usage });
  return Number(v);
};

const DELIVERY_FLAGS = [
  DB,
  flag('--number <n>', 'the pull request number', { parse: pullRequestNumber, required: true }),
  flag('--state <state>', 'the pull request state', { choices: ['open', 'merged', 'closed'], default: 'open' }),
  flag('--ci <ci>', 'its checks', { choices: ['passing', 'failing', 'running'] }),
  flag('--url <url>', 'its web address (default: the repository\'s /pull/N)'),
];

/**
 * `--db` of a subcommand. The root parses all options before dispatching, so `svc server run-token
 * RUN --db FILE` hands `--db` to `server` (which has its own) rather than to `run-token`: take it
 * from whichever command got it.
 */
function dbOf(opts: { db?: string }, cmd: Command): string {
  let db = opts.db;
  for (let c: Command | null = cmd.parent; !db && c; c = c.parent) db = (c.opts() as { db?: string }).db;
  // Through commander, which prints it as every usage error (a thrown commander code is taken as
  // already printed: the line was lost).
  if (!db) cmd.error("error: required option '--db <file>' not specified", { code: 'commander.missingMandatoryOptionValue', exitCode: EXIT.usage });
  return db;
}

export function registerServer(program: Command, context: (cmd: Command) => Context): void {
  const server = addFlags(
    program.command('server').description('run the local service: the whole contract on SQLite (prints its URL, and a token with --seed demo)'),
    SERVE_FLAGS,
  ).action(async (_o: unknown, cmd: Command) => {
    const { runServe, serveOptions } = await import('./serve.js');
    await runServe(serveOptions(flagsOf(cmd, SERVE_FLAGS), program.version() ?? '0.0.0-dev'), context(cmd));
  });
  withExamples(
    server,
    'svc server --db svc.db --seed demo',
    'svc server --port 0 --rate-limit 100/10',
    'CONTAINERS_CONF=$PWD/containers.conf svc server --seed demo --git-root repos --hosted-executor podman',
    'svc server --hosted-executor kubernetes --host 0.0.0.0 --hosted-base-url http://10.0.0.5:8787 --dry-run',
  );

  const token = server.command('token').description('manage personal access tokens of the local service');
  const create = addFlags(token.command('create').description('create a token and print it once'), TOKEN_CREATE_FLAGS)
    .action(async (_o: unknown, cmd: Command) => {
      const raw = flagsOf(cmd, TOKEN_CREATE_FLAGS);
      const opts = { ...raw, db: dbOf(raw, cmd) };
      const ctx = context(cmd);
      const { runTokenCreate } = await import('./token-create.js');
      await runTokenCreate(opts, ctx);
    });
  const runToken = server
    .command('run-token <run-id>')
    .description('mint the credential a hosted runner of this run is started with (SVC_RUN_TOKEN); printed once');
  addFlags(runToken, RUN_TOKEN_FLAGS)
    .action(async (runId: string, _o: unknown, cmd: Command) => {
      const raw = flagsOf(cmd, RUN_TOKEN_FLAGS);
      const opts = { db: dbOf(raw, cmd), runId, contractPrefix: Boolean(raw.contractPrefix) };
      const ctx = context(cmd);
      const { runRunToken } = await import('./run-token.js');
      await runRunToken(opts, ctx);
    });
  const done = server
    .command('done <keys...>')
    .description('mark work items done in the local service (local only: writes the database, not /api/v1); blocked cards become ready');
  addFlags(done, DONE_FLAGS)
    .action(async (keys: string[], _o: unknown, cmd: Command) => {
      const raw = flagsOf(cmd, DONE_FLAGS);
      const opts = { db: dbOf(raw, cmd), keys, status: raw.status };
      const ctx = context(cmd);
      const { runServerDone } = await import('./done.js');
      await runServerDone(opts, ctx);
    });
  const init = server
    .command('init')
    .description('make (or find) a workspace and a project in the local service and print a token for them (offline use without --seed demo)');
  addFlags(init, INIT_FLAGS)
    .action(async (_o: unknown, cmd: Command) => {
      const raw = flagsOf(cmd, INIT_FLAGS);
      const opts = { db: dbOf(raw, cmd), workspace: raw.workspace, project: raw.project, ...(raw.name ? { name: raw.name } : {}), repos: raw.repo ?? [] };
      const ctx = context(cmd);
      const { runServerInit } = await import('./init.js');
      await runServerInit(opts, ctx);
    });
  withExamples(init, 'TOKEN=$(svc server init --db svc.db --workspace acme --project PROJ)', 'svc server init --db svc.db --workspace acme --project PROJ --repo acme/shop');
  const delivery = server
    .command('delivery <key>')
    .description('record a pull request on a work item in the local service, so `svc review` and `svc fix` select it');
  addFlags(delivery, DELIVERY_FLAGS)
    .action(async (key: string, _o: unknown, cmd: Command) => {
      const raw = flagsOf(cmd, DELIVERY_FLAGS);
      const opts = { db: dbOf(raw, cmd), key, number: raw.number, state: raw.state, ...(raw.ci ? { ci: raw.ci } : {}), ...(raw.url ? { url: raw.url } : {}) };
      const ctx = context(cmd);
      const { runServerDelivery } = await import('./init.js');
      await runServerDelivery(opts, ctx);
    });
  withExamples(delivery, 'svc server delivery PROJ-3 --db svc.db --number 12', 'svc server delivery PROJ-3 --db svc.db --number 12 --ci failing');
  withExamples(done, 'svc server done DEMO-3 --db svc.db', 'svc server done DEMO-4 DEMO-5 --db svc.db --status cancelled');
  withExamples(runToken, 'SVC_RUN_TOKEN=$(svc server run-token run_abc --db svc.db) SVC_RUN_ID=run_abc svc attach');
  withExamples(create, 'svc server token create --db svc.db --workspace acme --project DEMO --scopes project:browse,work_item:edit');
}
