// `svc server` as its own process, the way a user runs it: the first stdout line is its URL, the
// second the demo seed's token. Every response it gives is validated against the contract
// document into a log file (SVC_SERVER_VALIDATE_LOG); `stop()` returns the violations.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { BIN, isolatedEnv } from './cli.js';
import { startSvc } from './svc-in-process.js';
import { afterAll, beforeAll, expect } from 'vitest';

export interface ServerProcess {
  url: string;
  token: string;
  db: string;
  child: ChildProcess;
  /** Stops the server and returns the contract violations it logged (none expected). */
  stop(): Promise<string[]>;
}

/** `svc server` as startLocalServer gives it: the same command, in this process. */
export interface LocalServer {
  url: string;
  token: string;
  db: string;
  /** Stops the server and returns the contract violations it logged (none expected). */
  stop(): Promise<string[]>;
}

export async function startServerProcess(args: string[] = []): Promise<ServerProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-server-'));
  const db = join(dir, 'svc.db');
  const log = join(dir, 'violations.jsonl');
  const child = spawn(process.execPath, [BIN, 'server', '--port', '0', '--db', db, '--seed', 'demo', ...args], {
    env: isolatedEnv({ SVC_SERVER_VALIDATE_LOG: log }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const next = async () => {
    const r = await Promise.race([
      lines.next(),
      new Promise<never>((_, fail) => setTimeout(() => fail(new Error(`svc server did not start: ${stderr}`)), 15_000)),
    ]);
    if (r.done) throw new Error(`svc server exited: ${stderr}`);
    return r.value;
  };
  const url = await next();
  const token = await next();
  return {
    url,
    token,
    db,
    child,
    async stop() {
      const exited = new Promise((done) => child.once('exit', done));
      child.kill('SIGTERM');
      await exited;
      return existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean) : [];
    },
  };
}

/**
 * The same `svc server` command line run in this process (test/support/svc-in-process.ts): the
 * real command tree, database file, seed and contract check, without a node start-up per file.
 * A test that kills the service or reads its process (exit code, signals) uses startServerProcess.
 * The service shares the test's event loop: a test using it never blocks that loop (no spawnSync).
 */
export async function startLocalServer(args: string[] = []): Promise<LocalServer> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-server-'));
  const db = join(dir, 'svc.db');
  const log = join(dir, 'violations.jsonl');
  // The service reads where to log violations from the environment once, as it starts.
  const before = process.env.SVC_SERVER_VALIDATE_LOG;
  process.env.SVC_SERVER_VALIDATE_LOG = log;
  const run = startSvc(['server', '--port', '0', '--db', db, '--seed', 'demo', ...args]);
  let ended = false;
  const done = run.done.finally(() => (ended = true));
  try {
    const deadline = Date.now() + 15_000;
    while (run.stdout.text.split('\n').length < 3) {
      if (ended || Date.now() > deadline) throw new Error(`svc server did not start: ${run.stderr.text}`);
      await new Promise((r) => setTimeout(r, 5));
    }
  } finally {
    if (before === undefined) delete process.env.SVC_SERVER_VALIDATE_LOG;
    else process.env.SVC_SERVER_VALIDATE_LOG = before;
  }
  const [url, token] = run.stdout.text.split('\n') as [string, string];
  return {
    url,
    token,
    db,
    async stop() {
      run.context()?.abort.abort('SIGTERM');
      const end = await done;
      // 143, as a spawned server stopped by SIGTERM ends.
      if (end.code !== 143) throw new Error(`svc server ended with ${end.code}: ${end.stderr}`);
      return existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean) : [];
    },
  };
}

/**
 * One `svc server --seed demo` (in this process, as startLocalServer runs it) for the whole calling file (beforeAll), stopped after its
 * last test (afterAll), which fails the file on a response that broke the contract document.
 */
export function localServerForFile(args: string[] = []): LocalServer {
  const server = {} as LocalServer;
  beforeAll(async () => {
    Object.assign(server, await startLocalServer(args));
  });
  afterAll(async () => {
    if (server.stop) expect(await server.stop(), 'responses that break the contract document').toEqual([]);
  });
  return server;
}
