// The one way svc runs a short program of its own and waits for its answer (git, a copy as the leg's
// user, buildkite-agent): node's child_process, about 5 ms of CPU less per process than execa on a
// 2-core machine. Never rejects; `code` is null when it could not start or was killed. A program
// of the leg (an agent, a workflow step) runs in a group of its own instead: ./run-in-group.ts.
import { spawn } from 'node:child_process';

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  cwd?: string;
  user?: { uid: number; gid: number };
  /** The whole environment; absent: svc's own. */
  env?: Record<string, string | undefined>;
  /** The child's descriptor 3 is that file of svc's. */
  fd3?: number;
  /** Written to stdin, which is then closed; absent: stdin is /dev/null. */
  input?: string | Buffer;
  /** Killed after this long (default 120 s: a git config could make a step hang). */
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 120_000;

export function run(file: string, args: readonly string[], opts: RunOptions = {}): Promise<Run> {
  return runRaw(file, args, opts).then((r) => ({ code: r.code, stdout: r.stdout.toString('utf8'), stderr: r.stderr }));
}

/** `run` with stdout as the program's bytes (a file read as its owner). */
export function runRaw(file: string, args: readonly string[], opts: RunOptions = {}): Promise<{ code: number | null; stdout: Buffer; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(file, args, {
      cwd: opts.cwd ?? '/',
      timeout: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      stdio: [opts.input !== undefined ? 'pipe' : 'ignore', 'pipe', 'pipe', ...(opts.fd3 !== undefined ? [opts.fd3] : [])],
      ...(opts.user ? { uid: opts.user.uid, gid: opts.user.gid } : {}),
      ...(opts.env ? { env: opts.env } : {}),
    });
    const out: Buffer[] = [];
    let stderr = '';
    child.stdout?.on('data', (d: Buffer) => out.push(d));
    child.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', (error) => done({ code: null, stdout: Buffer.concat(out), stderr: stderr || error.message }));
    child.on('close', (code) => done({ code, stdout: Buffer.concat(out), stderr }));
    if (opts.input !== undefined) {
      child.stdin?.on('error', () => {});
      child.stdin?.end(opts.input);
    }
  });
}

/** The last line a failed program said, or its exit code. */
export const lastLine = (r: Pick<Run, 'code' | 'stderr'>): string => r.stderr.trim().split('\n').pop() || `exit ${r.code}`;

/** `run` for a program whose failure is an error: its stdout when it exits 0, else `WHAT: its last line`, thrown. */
export async function runOk(file: string, args: readonly string[], opts: RunOptions = {}, what: string = file): Promise<string> {
  const r = await run(file, args, opts);
  if (r.code !== 0) throw new Error(`${what}: ${lastLine(r)}`);
  return r.stdout;
}
