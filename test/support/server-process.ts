// `svc server` as its own process, the way a user runs it: the first stdout line is its URL, the
// second the demo seed's token. Every response it gives is validated against the contract
// document into a log file (SVC_SERVER_VALIDATE_LOG); `stop()` returns the violations.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { BIN, isolatedEnv } from './cli.js';

export interface ServerProcess {
  url: string;
  token: string;
  db: string;
  child: ChildProcess;
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
    const r = await Promise.race([lines.next(), new Promise<never>((_, fail) => setTimeout(() => fail(new Error(`svc server did not start: ${stderr}`)), 15_000))]);
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
