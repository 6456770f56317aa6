// `svc server`: the local service. The commands module only parses flags; the service's own
// runServerCommand does the work (the server depends on the contract alone, never on the CLI).
import { type Command, Option } from 'commander';
import type { Context } from '../context.js';
import { EXIT } from '../exit-codes.js';
import { withExamples } from '../examples.js';
import type { ServeFlags } from './serve.js';
import type { TokenCreateOptions } from './token-create.js';

const port = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw Object.assign(new Error(`--port takes 0-65535, got '${v}'`), { code: 'commander.invalidArgument', exitCode: EXIT.usage });
  return n;
};

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
  const server = program
    .command('server')
    .description('run the local service: the whole contract on SQLite (prints its URL, and a token with --seed demo)')
    .option('--port <port>', 'port to listen on (0 picks a free one)', port, 8787)
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--db <file>', 'SQLite database file (default: in memory)')
    .addOption(new Option('--seed <name>', 'seed a demo workspace, project and token').choices(['demo']))
    .option('--rate-limit <n/seconds>', 'per-token rate limit, e.g. 600/60')
    .option('--git-root <dir>', 'folder of bare repositories (<dir>/<owner>/<name>.git) served to hosted runs over smart HTTP')
    .addOption(new Option('--hosted-executor <engine>', 'start a runner container for each hosted run opened (default: none)').choices(['podman', 'docker', 'kubernetes']))
    .option('--hosted-image <ref>', 'the runner image (default localhost/svc:<version of svc>, built by npm run image)')
    .option('--hosted-agent-cmd <cmd>', 'the agent command runners use for runs that name no agent preset')
    .option('--hosted-base-url <url>', "SVC_BASE_URL as runners reach this service (default: the service's own URL)")
    .option('--hosted-timeout <duration>', "a hosted run's deadline: its runner is stopped and the run closed timed_out (default 60m)")
    .option('--hosted-logs <dir>', "where runners' logs are kept (default: a fresh folder in the temp folder)")
    .option('--hosted-network <name>', 'podman/docker: the network runners join (default host, so they reach a loopback service)')
    .option('--hosted-as-root', "podman/docker: the runner runs as root in its container, so svc runs each agent as a uid of its own (default: the image's non-root user)")
    .option('--kubeconfig <file>', 'kubernetes: the kubeconfig to use (default KUBECONFIG or ~/.kube/config)')
    .option('--hosted-namespace <ns>', "kubernetes: the Jobs' namespace (default the context's, else default)")
    .option('--hosted-requests <list>', 'kubernetes: resource requests of the runner, e.g. cpu=500m,memory=512Mi')
    .option('--hosted-limits <list>', 'kubernetes: resource limits of the runner, e.g. cpu=2,memory=2Gi')
    .option('--hosted-poll <duration>', "kubernetes: how often a running Job's status is read (default 5s)")
    .option('--dry-run', 'with --hosted-executor: print what each hosted run would start (a command line, or YAML manifests) and start nothing')
    .action(async (raw: ServeFlags, cmd: Command) => {
      const { runServe, serveOptions } = await import('./serve.js');
      await runServe(serveOptions(raw, program.version() ?? '0.0.0-dev'), context(cmd));
    });
  withExamples(
    server,
    'svc server --db svc.db --seed demo',
    'svc server --port 0 --rate-limit 100/10',
    'CONTAINERS_CONF=$PWD/containers.conf svc server --seed demo --git-root repos --hosted-executor podman',
    'svc server --hosted-executor kubernetes --host 0.0.0.0 --hosted-base-url http://10.0.0.5:8787 --dry-run',
  );

  const token = server.command('token').description('manage personal access tokens of the local service');
  const create = token
    .command('create')
    .description('create a token and print it once')
    .option('--db <file>', 'the SQLite database of the service (required)')
    .requiredOption('--workspace <id-or-slug>', 'the workspace the token is bound to')
    .option('--project <key>', 'narrow the token to one project')
    .option('--scopes <list>', 'comma-separated: project:browse,work_item:edit,sprint:manage,ai:plan (default all)')
    .option('--user <id-or-email>', 'the member the token acts as (default the first member)')
    .option('--expires-at <date-time>', 'expiry, UTC ending in Z')
    .action(async (raw: Omit<TokenCreateOptions, 'db'> & { db?: string }, cmd: Command) => {
      const opts = { ...raw, db: dbOf(raw, cmd) };
      const ctx = context(cmd);
      const { runTokenCreate } = await import('./token-create.js');
      await runTokenCreate(opts, ctx);
    });
  const runToken = server
    .command('run-token <run-id>')
    .description('mint the credential a hosted runner of this run is started with (SVC_RUN_TOKEN); printed once')
    .option('--db <file>', 'the SQLite database of the service (required)')
    .option('--contract-prefix', 'mint it as svc_pat_… (the contract\'s one bearer prefix) instead of svc_run_…')
    .action(async (runId: string, raw: { db?: string; contractPrefix?: boolean }, cmd: Command) => {
      const opts = { db: dbOf(raw, cmd), runId, contractPrefix: Boolean(raw.contractPrefix) };
      const ctx = context(cmd);
      const { runRunToken } = await import('./run-token.js');
      await runRunToken(opts, ctx);
    });
  const done = server
    .command('done <keys...>')
    .description('mark work items done in the local service (local only: writes the database, not /api/v1); blocked cards become ready')
    .option('--db <file>', 'the SQLite database of the service (required)')
    .option('--status <status>', 'the done status to set: done or cancelled', 'done')
    .action(async (keys: string[], raw: { db?: string; status: string }, cmd: Command) => {
      const opts = { db: dbOf(raw, cmd), keys, status: raw.status };
      const ctx = context(cmd);
      const { runServerDone } = await import('./done.js');
      await runServerDone(opts, ctx);
    });
  const init = server
    .command('init')
    .description('make (or find) a workspace and a project in the local service and print a token for them (offline use without --seed demo)')
    .option('--db <file>', 'the SQLite database of the service (required; made if missing)')
    .requiredOption('--workspace <slug>', 'the workspace, by its slug (made if missing)')
    .requiredOption('--project <key>', 'the project key, e.g. PROJ (made if missing)')
    .option('--name <name>', 'the name of a project made now (default: its key)')
    .option('--repo <url>', 'a target repository of the project\'s items (repeatable): owner/name, https:// or ssh URL', (v: string, all: string[] = []) => [...all, v])
    .action(async (raw: { db?: string; workspace: string; project: string; name?: string; repo?: string[] }, cmd: Command) => {
      const opts = { db: dbOf(raw, cmd), workspace: raw.workspace, project: raw.project, ...(raw.name ? { name: raw.name } : {}), repos: raw.repo ?? [] };
      const ctx = context(cmd);
      const { runServerInit } = await import('./init.js');
      await runServerInit(opts, ctx);
    });
  withExamples(init, 'TOKEN=$(svc server init --db svc.db --workspace acme --project PROJ)', 'svc server init --db svc.db --workspace acme --project PROJ --repo acme/shop');
  const delivery = server
    .command('delivery <key>')
    .description('record a pull request on a work item in the local service, so `svc review` and `svc fix` select it')
    .option('--db <file>', 'the SQLite database of the service (required)')
    .requiredOption('--number <n>', 'the pull request number', (v: string) => {
      if (!/^[1-9][0-9]*$/.test(v)) throw Object.assign(new Error(`--number takes a pull request number (1 or more), got '${v}'`), { code: 'commander.invalidArgument', exitCode: EXIT.usage });
      return Number(v);
    })
    .addOption(new Option('--state <state>', 'the pull request state').choices(['open', 'merged', 'closed']).default('open'))
    .addOption(new Option('--ci <ci>', 'its checks').choices(['passing', 'failing', 'running']))
    .option('--url <url>', 'its web address (default: the repository\'s /pull/N)')
    .action(async (key: string, raw: { db?: string; number: number; state: string; ci?: string; url?: string }, cmd: Command) => {
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
