// The local service in-process: `startServer` for tests, demos and `svc server` itself.
import { appendFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAdmin, type Admin } from './admin.js';
import { createRequestHandler, type ResponseInfo } from './app.js';
import { CONTRACT_HOOKS, type ContractHooks } from './contract-hooks.js';
import { cursorCodecFor } from './cursors.js';
import { openDatabase, type Database } from './db.js';
import type { ServiceConfig } from './kernel.js';
import { configurePlanner } from './planning/index.js';
import { MODULES } from './modules.js';
import { RateLimiter } from './rate-limit.js';
import { seedDemo } from './seed.js';
import type { HostedExecutor, HostedExecutorOptions } from './hosted-executor/index.js';

export const DEFAULT_CONFIG: ServiceConfig = {
  reapAfterMs: 5 * 60_000,
  reapEveryMs: 15_000,
  rateLimit: 600,
  rateWindowMs: 60_000,
  gitTokenTtlMs: 60 * 60_000,
  baseUrl: '',
};

export interface StartOptions {
  /** 0 (default) picks a free port. */
  port?: number;
  host?: string;
  /** SQLite file, or ':memory:' (default). */
  dbFile?: string;
  config?: Partial<ServiceConfig>;
  seed?: 'demo';
  /** Observes every response (tests validate them against the contract document). */
  onResponse?: (info: ResponseInfo) => void;
  /** The clock (tests move it); default the real one. */
  now?: () => Date;
  /** Where unexpected faults are logged; default stderr. */
  logError?: (line: string) => void;
  /** Start a runner for each hosted run opened (`--hosted-executor`); checked before the server answers. */
  hosted?: HostedExecutorOptions;
  /** Where the hosted executor's dry run prints; default stdout. */
  print?: (text: string) => void;
}

export interface LocalService {
  url: string;
  port: number;
  db: Database;
  admin: Admin;
  config: ServiceConfig;
  /** The demo seed's token and ids, when started with `seed: 'demo'`. */
  seeded?: { token: string; workspaceId: string; userId: string; projectKey: string };
  /** The hosted executor, when started with `hosted`. */
  hosted?: HostedExecutor;
  close(): Promise<void>;
}

/** With SVC_SERVER_VALIDATE_LOG=<file>, every response is checked and violations appended as JSON lines. */
function validationLogger(file: string, hooks: ContractHooks): (info: ResponseInfo) => void {
  return (info) => {
    if (!info.operationId) return;
    const issues = [
      ...hooks.validateResponse(info.operationId, info.status, info.body),
      ...hooks.validateResponseHeaders(info.operationId, info.status, info.headers),
    ];
    for (const issue of issues) {
      appendFileSync(file, `${JSON.stringify({ operationId: info.operationId, status: info.status, ...issue })}\n`);
    }
  };
}

export async function startServer(opts: StartOptions = {}): Promise<LocalService> {
  const config: ServiceConfig = { ...DEFAULT_CONFIG, ...opts.config };
  const now = opts.now ?? (() => new Date());
  const logError = opts.logError ?? ((line: string) => process.stderr.write(`${line}\n`));
  const db = openDatabase(opts.dbFile ?? ':memory:', MODULES);
  const admin = createAdmin(db, now);
  // Seeded before listening: a seed that fails leaves nothing listening without a URL.
  const seeded = opts.seed === 'demo' ? seedDemo(admin, db) : undefined;
  // A demo should plan without any outside dependency: the built-in deterministic planner.
  if (seeded) configurePlanner(db, { kind: 'builtin' });
  const contract = CONTRACT_HOOKS;
  const observers = [opts.onResponse];
  const logFile = process.env.SVC_SERVER_VALIDATE_LOG;
  if (logFile) observers.push(validationLogger(logFile, contract));

  const handler = createRequestHandler({
    db,
    config,
    modules: MODULES,
    cursors: cursorCodecFor(db),
    limiter: new RateLimiter(config.rateLimit, config.rateWindowMs),
    contract,
    now,
    logError,
    onResponse: (info) => {
      for (const o of observers) o?.(info);
    },
  });
  const server = createServer(handler);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const host = opts.host ?? '127.0.0.1';
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  // Runners elsewhere (a cluster) reach the service, and its git remote, at the address they are given.
  if (opts.hosted?.baseUrl) config.baseUrl = opts.hosted.baseUrl;
  config.baseUrl ||= url;

  let hosted: HostedExecutor | undefined;
  if (opts.hosted) {
    try {
      const { createHostedExecutor } = await import('./hosted-executor/index.js');
      hosted = await createHostedExecutor(opts.hosted, {
        db,
        now,
        url,
        ...(opts.dbFile ? { dbFile: opts.dbFile } : {}),
        log: logError,
        print: opts.print ?? ((t) => process.stdout.write(t)),
      });
    } catch (error) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      db.close();
      throw error;
    }
    const executor = hosted;
    observers.push((info) => {
      if (info.operationId !== 'openDispatchRun' || info.status !== 201) return;
      const { run, created } = info.body as { run?: { id?: string; origin?: string }; created?: boolean };
      if (created && run?.origin === 'hosted' && run.id) {
        void executor.launch(run.id).catch((error) => logError(`svc server: runner of ${run.id}: ${(error as Error).message}`));
      }
    });
  }

  const stops = MODULES.flatMap((m) => (m.start ? [m.start({ db, config, now })] : []));
  let closed: Promise<void> | null = null;
  return {
    url,
    port,
    db,
    admin,
    config,
    seeded,
    hosted,
    close() {
      closed ??= (async () => {
        // Runners first, while the service still answers: a stopped runner closes its run itself.
        await hosted?.stop();
        for (const stop of stops) stop();
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
        db.close();
      })();
      return closed;
    },
  };
}

/** The streams and signal a server command uses (it never touches process.* itself). */
