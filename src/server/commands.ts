// `svc server …` as plain functions (commander is wired by the CLI): serve until the signal aborts,
// and the admin commands that work on the database directly (token create, run-token, done, init,
// delivery). They never touch process.*: the CLI passes its streams and signal.
import { PAT_PREFIX, RUN_TOKEN_PREFIX, SCOPES, type Scope } from '../contract/types.js';
import { createAdmin } from './admin.js';
import { DONE_STATUSES } from './work-items/status.js';
import { openDatabase } from './db.js';
import { NewerDatabaseError } from './migrations.js';
import { ServiceError, type ServiceConfig } from './kernel.js';
import { mintRunCredential } from './dispatch-runs/index.js';
import { MODULES } from './modules.js';
import { InitError, initProject, recordDelivery } from './init.js';
import type { HostedExecutorOptions } from './hosted-executor/index.js';
import { startServer } from './start.js';

export interface ServerCommandIO {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  /** Aborting stops a running `svc server`. */
  signal?: AbortSignal;
}

export type ServerCommand =
  | { command: 'serve'; port?: number; host?: string; db?: string; seed?: 'demo'; rateLimit?: string; gitRoot?: string; hosted?: HostedExecutorOptions }
  | { command: 'run-token'; db: string; runId: string; contractPrefix?: boolean }
  | { command: 'done'; db: string; keys: string[]; status?: string }
  | { command: 'init'; db: string; workspace: string; project: string; name?: string; repos?: string[] }
  | { command: 'delivery'; db: string; key: string; number: number; state?: string; ci?: string; url?: string }
  | {
      command: 'token-create';
      db: string;
      workspace: string;
      project?: string;
      /** A list, or the flag's comma-separated text. */
      scopes?: string[] | string;
      user?: string;
      expiresAt?: string;
    };

/** `N/SECONDS`, e.g. `600/60`. */
export function parseRateLimit(text: string): Pick<ServiceConfig, 'rateLimit' | 'rateWindowMs'> {
  const m = /^(\d+)\/(\d+)$/.exec(text.trim());
  if (!m || Number(m[1]) < 1 || Number(m[2]) < 1) throw new Error(`--rate-limit must look like 600/60 (requests/seconds), got '${text}'`);
  return { rateLimit: Number(m[1]), rateWindowMs: Number(m[2]) * 1000 };
}

/** Runs `svc server` (until the signal aborts) or `svc server token create`; returns the exit code. */
export async function runServerCommand(cmd: ServerCommand, io: ServerCommandIO): Promise<number> {
  try {
    return await serverCommand(cmd, io);
  } catch (error) {
    // Usage errors (exit 2), said in one line. A newer build's store is left exactly as it is: the
    // user runs that build, or another file. A port in use is most often a server already running.
    const inUse = (error as NodeJS.ErrnoException).code === 'EADDRINUSE' && cmd.command === 'serve';
    // The hosted executor's engine is missing or refused: its own words, on one line.
    const engine = (error as Error).name === 'HostedEngineError';
    if (!(error instanceof NewerDatabaseError) && !inUse && !engine) throw error;
    io.stderr.write(
      inUse
        ? `svc: ${cmd.host ?? '127.0.0.1'}:${cmd.port} is already in use (another svc server?): pass another --port, or --port 0 for a free one\n`
        : `svc: ${(error as Error).message}\n`,
    );
    return 2;
  }
}

async function serverCommand(cmd: ServerCommand, io: ServerCommandIO): Promise<number> {
  if (cmd.command === 'token-create') return tokenCreate(cmd, io);
  if (cmd.command === 'run-token') return runToken(cmd, io);
  if (cmd.command === 'done') return markDone(cmd, io);
  if (cmd.command === 'init' || cmd.command === 'delivery') return initOrDelivery(cmd, io);
  const service = await startServer({
    port: cmd.port ?? 0,
    host: cmd.host,
    dbFile: cmd.db,
    seed: cmd.seed,
    config: {
      ...(cmd.rateLimit ? parseRateLimit(cmd.rateLimit) : {}),
      ...(cmd.gitRoot ? { gitRoot: cmd.gitRoot } : {}),
    },
    logError: (line) => io.stderr.write(`${line}\n`),
    hosted: cmd.hosted,
    print: (text) => io.stdout.write(text),
  });
  io.stderr.write(`svc server listening on ${service.url} (database ${cmd.db ?? ':memory:'})\n`);
  if (service.hosted) {
    const where = service.hosted.logDir ? `, runners' logs in ${service.hosted.logDir}` : ', dry run: printing what each would start';
    io.stderr.write(`hosted runs start on ${service.hosted.engine} (image ${cmd.hosted?.image}${where})\n`);
  }
  io.stdout.write(`${service.url}\n`);
  if (service.seeded) io.stdout.write(`${service.seeded.token}\n`);
  await new Promise<void>((resolve) => {
    if (!io.signal) return;
    if (io.signal.aborted) return resolve();
    io.signal.addEventListener('abort', () => resolve(), { once: true });
  });
  await service.close();
  return 0;
}

function tokenCreate(cmd: Extract<ServerCommand, { command: 'token-create' }>, io: ServerCommandIO): number {
  const db = openDatabase(cmd.db, MODULES);
  try {
    const ws = db.prepare('SELECT id FROM workspaces WHERE id = ? OR slug = ?').get(cmd.workspace, cmd.workspace) as { id: string } | undefined;
    if (!ws) {
      io.stderr.write(`svc: no workspace '${cmd.workspace}' in ${cmd.db} (\`svc server init --db ${cmd.db} --workspace SLUG --project KEY\` makes one)\n`);
      return 4;
    }
    const scopes =
      typeof cmd.scopes === 'string'
        ? cmd.scopes
            .split(',')
            .map((x) => x.trim())
            .filter(Boolean)
        : (cmd.scopes ?? [...SCOPES]);
    const unknown = scopes.filter((s) => !(SCOPES as readonly string[]).includes(s));
    if (unknown.length) {
      io.stderr.write(`svc: unknown scope ${unknown.join(', ')} (known: ${SCOPES.join(', ')})\n`);
      return 2;
    }
    const user = (
      cmd.user
        ? db
            .prepare('SELECT u.id FROM users u JOIN memberships m ON m.user_id = u.id AND m.workspace_id = ? WHERE u.id = ? OR u.email = ?')
            .get(ws.id, cmd.user, cmd.user)
        : db.prepare('SELECT user_id AS id FROM memberships WHERE workspace_id = ? ORDER BY rowid LIMIT 1').get(ws.id)
    ) as { id: string } | undefined;
    if (!user) {
      io.stderr.write(`svc: no member ${cmd.user ?? ''} in workspace '${cmd.workspace}'\n`);
      return 4;
    }
    const admin = createAdmin(db);
    if (cmd.project && !db.prepare('SELECT 1 FROM projects WHERE key = ? AND workspace_id = ?').get(cmd.project, ws.id)) {
      io.stderr.write(`svc: no project '${cmd.project}' in workspace '${cmd.workspace}'\n`);
      return 4;
    }
    const { token } = admin.createToken({
      workspaceId: ws.id,
      userId: user.id,
      projectKey: cmd.project,
      scopes: scopes as Scope[],
      expiresAt: cmd.expiresAt,
    });
    io.stdout.write(`${token}\n`);
    return 0;
  } finally {
    db.close();
  }
}

/**
 * `svc server done KEY... --db FILE`: the local-only way to move work items to a done status
 * (outside /api/v1, which has no status transitions a run may use). Written straight into the
 * database file, so it works with the server running (its ready lanes see the change at once) or
 * stopped. All keys are checked before any is changed.
 */
function markDone(cmd: Extract<ServerCommand, { command: 'done' }>, io: ServerCommandIO): number {
  const status = cmd.status ?? 'done';
  if (!DONE_STATUSES.includes(status)) {
    io.stderr.write(`svc: --status must be a done status: ${DONE_STATUSES.join(', ')} (got '${status}')\n`);
    return 2;
  }
  const bad = cmd.keys.find((k) => !/^[A-Z][A-Z0-9]*-[0-9]+$/.test(k));
  if (bad !== undefined || cmd.keys.length === 0) {
    io.stderr.write(bad === undefined ? 'svc: name at least one KEY\n' : `svc: not a work item key: ${bad}\n`);
    return 2;
  }
  const db = openDatabase(cmd.db, MODULES);
  try {
    const admin = createAdmin(db);
    const missing = cmd.keys.filter((k) => !db.prepare('SELECT 1 FROM work_items WHERE key = ?').get(k));
    if (missing.length) {
      io.stderr.write(`svc: no work item ${missing.join(', ')} in ${cmd.db}\n`);
      return 4;
    }
    for (const key of cmd.keys) {
      admin.setStatus(key, status);
      io.stdout.write(`${key} ${status}\n`);
    }
    return 0;
  } finally {
    db.close();
  }
}

/** `svc server init` (a token on stdout) and `svc server delivery` (the delivery recorded, one line). */
function initOrDelivery(cmd: Extract<ServerCommand, { command: 'init' | 'delivery' }>, io: ServerCommandIO): number {
  const db = openDatabase(cmd.db, MODULES);
  try {
    if (cmd.command === 'init') {
      const { token, created } = initProject(db, cmd);
      io.stderr.write(
        created.length
          ? `made ${created.join(' and ')} in ${cmd.db}\n`
          : `found workspace ${cmd.workspace} and project ${cmd.project} in ${cmd.db}: a fresh token\n`,
      );
      io.stdout.write(`${token}\n`);
    } else {
      const d = recordDelivery(db, cmd);
      io.stdout.write(`${cmd.key} ${d.repo}#${d.number} ${d.state}${d.ci ? ` ci ${d.ci}` : ''} ${d.url}\n`);
    }
    return 0;
  } catch (error) {
    if (!(error instanceof InitError)) throw error;
    io.stderr.write(`svc: ${error.message}\n`);
    return error.exitCode;
  } finally {
    db.close();
  }
}

/**
 * `svc server run-token RUN_ID`: the credential a hosted runner is started with. On the real
 * service the platform injects it; here an operator mints it once for a hosted run.
 */
function runToken(cmd: Extract<ServerCommand, { command: 'run-token' }>, io: ServerCommandIO): number {
  const db = openDatabase(cmd.db, MODULES);
  try {
    io.stdout.write(`${mintRunCredential(db, cmd.runId, new Date(), cmd.contractPrefix ? PAT_PREFIX : RUN_TOKEN_PREFIX)}\n`);
    return 0;
  } catch (error) {
    if (!(error instanceof ServiceError)) throw error;
    io.stderr.write(`svc: ${error.message}\n`);
    return error.status === 404 ? 4 : 2;
  } finally {
    db.close();
  }
}
