// `svc server`: the local service. The commands module only parses flags; the service's own
// runServerCommand does the work (the server depends on the contract alone, never on the CLI).
import type { Command } from 'commander';
import type { Context, Depth } from '../context.js';
import { EXIT } from '../exit-codes.js';
import { withExamples } from '../examples.js';
import { addFlags, flagsOf } from '../flag-table.js';
import { DELIVERY_FLAGS, DONE_FLAGS, INIT_FLAGS, RUN_TOKEN_FLAGS, SERVE_FLAGS, type ServeFlags, TOKEN_CREATE_FLAGS } from './flags.js';

/**
 * `--db` of a subcommand. The root parses all options before dispatching, so `svc server run-token
 * RUN --db FILE` hands `--db` to `server` (which has its own) rather than to `run-token`: take it
 * from whichever command got it.
 */
function dbOf(opts: Pick<ServeFlags, 'db'>, cmd: Command): string {
  let db = opts.db;
  for (let c: Command | null = cmd.parent; !db && c; c = c.parent) db = (c.opts() as Pick<ServeFlags, 'db'>).db;
  // Through commander, which prints it as every usage error (a thrown commander code is taken as
  // already printed: the line was lost).
  if (!db) cmd.error("error: required option '--db <file>' not specified", { code: 'commander.missingMandatoryOptionValue', exitCode: EXIT.usage });
  return db;
}

export function registerServer(program: Command, context: (cmd: Command) => Context, depth: Depth = 'whole'): void {
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
  if (depth === 'top') return;

  const token = server.command('token').description('manage personal access tokens of the local service');
  const create = addFlags(token.command('create').description('create a token and print it once'), TOKEN_CREATE_FLAGS).action(
    async (_o: unknown, cmd: Command) => {
      const raw = flagsOf(cmd, TOKEN_CREATE_FLAGS);
      const opts = { ...raw, db: dbOf(raw, cmd) };
      const ctx = context(cmd);
      const { runTokenCreate } = await import('./token-create.js');
      await runTokenCreate(opts, ctx);
    },
  );
  const runToken = server
    .command('run-token <run-id>')
    .description('mint the credential a hosted runner of this run is started with (SVC_RUN_TOKEN); printed once');
  addFlags(runToken, RUN_TOKEN_FLAGS).action(async (runId: string, _o: unknown, cmd: Command) => {
    const raw = flagsOf(cmd, RUN_TOKEN_FLAGS);
    const opts = { db: dbOf(raw, cmd), runId, contractPrefix: Boolean(raw.contractPrefix) };
    const ctx = context(cmd);
    const { runRunToken } = await import('./run-token.js');
    await runRunToken(opts, ctx);
  });
  const done = server
    .command('done <keys...>')
    .description('mark work items done in the local service (local only: writes the database, not /api/v1); blocked cards become ready');
  addFlags(done, DONE_FLAGS).action(async (keys: string[], _o: unknown, cmd: Command) => {
    const raw = flagsOf(cmd, DONE_FLAGS);
    const opts = { db: dbOf(raw, cmd), keys, status: raw.status };
    const ctx = context(cmd);
    const { runServerDone } = await import('./done.js');
    await runServerDone(opts, ctx);
  });
  const init = server
    .command('init')
    .description('make (or find) a workspace and a project in the local service and print a token for them (offline use without --seed demo)');
  addFlags(init, INIT_FLAGS).action(async (_o: unknown, cmd: Command) => {
    const raw = flagsOf(cmd, INIT_FLAGS);
    const opts = { db: dbOf(raw, cmd), workspace: raw.workspace, project: raw.project, ...(raw.name ? { name: raw.name } : {}), repos: raw.repo ?? [] };
    const ctx = context(cmd);
    const { runServerInit } = await import('./init.js');
    await runServerInit(opts, ctx);
  });
  withExamples(
    init,
    'TOKEN=$(svc server init --db svc.db --workspace acme --project PROJ)',
    'svc server init --db svc.db --workspace acme --project PROJ --repo acme/shop',
  );
  const delivery = server
    .command('delivery <key>')
    .description('record a pull request on a work item in the local service, so `svc review` and `svc fix` select it');
  addFlags(delivery, DELIVERY_FLAGS).action(async (key: string, _o: unknown, cmd: Command) => {
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
