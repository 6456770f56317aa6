// The one way svc runs a short program of its own and waits for its answer (git, gh, useradd, a
// copy as the leg's user, buildkite-agent): node's child_process, about 5 ms of CPU less per process
// than execa on a 2-core machine, and no shell. `run` never rejects; `code` is null when it could not
// start or was killed. A program of the leg (an agent, a workflow step) runs in a group of its own
// instead: ./run-in-group.ts. node:child_process is taken on the first call, not imported: the
// config store reads a syntax from boundary/user.ts on every command's start-up, and the module
// loads net and dgram with it (~1.5 ms; test/cli/startup-builtins.test.ts).
import type { SpawnOptions, SpawnSyncOptions } from 'node:child_process';

export interface Run {
  code: number | null;
  /** The signal that ended it (its timeout's SIGTERM among them), or null. */
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** Why it has no exit code of its own: spawn's error (ENOENT, EACCES) or ERR_CHILD_PROCESS_STDIO_MAXBUFFER; else null. */
  errno: string | null;
}

export interface RunOptions {
  /** Default `/`: the leg's user may not reach svc's own folder. */
  cwd?: string;
  user?: { uid: number; gid: number };
  /** The whole environment; absent: svc's own. */
  env?: Record<string, string | undefined>;
  /** The child's descriptor 3 is that file of svc's. */
  fd3?: number;
  /** Written to stdin, which is then closed; absent: stdin is /dev/null. */
  input?: string | Buffer;
  /** Killed (SIGTERM) after this long; 0: never. Default 120 s: a git config could make a step hang. */
  timeoutMs?: number;
  /** More bytes than this on stdout or on stderr and it is killed (errno ERR_CHILD_PROCESS_STDIO_MAXBUFFER); default unbounded. */
  maxBuffer?: number;
  /** Killed (SIGTERM) when this aborts: a question asked ahead that nobody needs any more. */
  signal?: AbortSignal;
}

/** A program that failed where its failure is an error: its answer, as `run` gave it, on the error. */
export class RunError extends Error {
  override readonly name = 'RunError';
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly errno: string | null;
  readonly stdout: string;
  readonly stderr: string;
  constructor(message: string, r: Run) {
    super(message);
    this.exitCode = r.code;
    this.signal = r.signal;
    this.errno = r.errno;
    this.stdout = r.stdout;
    this.stderr = r.stderr;
  }
  /** As on execFile's errors: the errno when it could not start (`'ENOENT'`), else the exit code. */
  get code(): string | number | null {
    return this.errno ?? this.exitCode;
  }
}

const DEFAULT_TIMEOUT_MS = 120_000;
const MAX_BUFFER = 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER';

const childProcess = () => process.getBuiltinModule('node:child_process');

function spawnOptions(opts: RunOptions): SpawnOptions & SpawnSyncOptions {
  return {
    cwd: opts.cwd ?? '/',
    timeout: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    stdio: [opts.input !== undefined ? 'pipe' : 'ignore', 'pipe', 'pipe', ...(opts.fd3 !== undefined ? [opts.fd3] : [])],
    ...(opts.user ? { uid: opts.user.uid, gid: opts.user.gid } : {}),
    ...(opts.env ? { env: opts.env } : {}),
    ...(opts.signal ? { signal: opts.signal } : {}),
  };
}

export function run(file: string, args: readonly string[], opts: RunOptions = {}): Promise<Run> {
  return runRaw(file, args, opts).then((r) => ({ ...r, stdout: r.stdout.toString('utf8') }));
}

/** `run` with stdout as the program's bytes (a file read as its owner). */
export function runRaw(file: string, args: readonly string[], opts: RunOptions = {}): Promise<Omit<Run, 'stdout'> & { stdout: Buffer }> {
  return new Promise((done) => {
    const child = childProcess().spawn(file, args, spawnOptions(opts));
    const out: Buffer[] = [];
    let outBytes = 0;
    let stderr = '';
    let errno: string | null = null;
    const limit = opts.maxBuffer ?? Number.POSITIVE_INFINITY;
    const overflow = () => {
      errno = MAX_BUFFER;
      child.kill();
    };
    child.stdout?.on('data', (d: Buffer) => {
      outBytes += d.length;
      if (outBytes > limit) return overflow();
      out.push(d);
    });
    child.stderr?.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
      if (stderr.length > limit) overflow();
    });
    const answer = (code: number | null, signal: NodeJS.Signals | null) => ({ code: errno ? null : code, signal, stdout: Buffer.concat(out), stderr, errno });
    child.on('error', (error: NodeJS.ErrnoException) => {
      // Aborted: a grandchild holding the pipes (an ssh behind git) must not keep svc waiting.
      if (error.name === 'AbortError') for (const s of [child.stdin, child.stdout, child.stderr]) s?.destroy();
      errno ??= error.code ?? 'ERROR';
      done({ ...answer(null, null), stderr: stderr || error.message });
    });
    child.on('close', (code, signal) => done(answer(code, signal)));
    if (opts.input !== undefined) {
      child.stdin?.on('error', () => {});
      child.stdin?.end(opts.input);
    }
  });
}

/**
 * `run` blocking the event loop until the program ends: only for a caller that cannot wait (a
 * report line written as a leg ends). Default maxBuffer 1 MiB, spawnSync's own.
 */
export function runSync(file: string, args: readonly string[], opts: RunOptions = {}): Run {
  const r = childProcess().spawnSync(file, args, { ...spawnOptions(opts), encoding: 'utf8', maxBuffer: opts.maxBuffer ?? 1 << 20, input: opts.input });
  const errno = (r.error as NodeJS.ErrnoException | undefined)?.code ?? null;
  return { code: errno ? null : r.status, signal: r.signal, stdout: r.stdout ?? '', stderr: r.stderr || (r.error?.message ?? ''), errno };
}

/**
 * The first line a failed program said, where a tool puts its message first and then the input it
 * quotes (nft, bwrap), else why it has no exit code, else its exit code or signal.
 */
export const firstLine = (r: Pick<Run, 'code' | 'signal' | 'stderr' | 'errno'>): string =>
  (r.stderr.trim() || r.errno || `exit ${r.code ?? r.signal}`).split('\n')[0]!;

/** The last line a failed program said, or its exit code. */
export const lastLine = (r: Pick<Run, 'code' | 'stderr'>): string => r.stderr.trim().split('\n').pop() || `exit ${r.code}`;

/** `run` for a program whose failure is an error: its stdout when it exits 0, else a RunError `WHAT: its last line`. */
export async function runOk(file: string, args: readonly string[], opts: RunOptions = {}, what: string = file): Promise<string> {
  const r = await run(file, args, opts);
  if (r.code !== 0) throw new RunError(`${what}: ${lastLine(r)}`, r);
  return r.stdout;
}

/** A RunError worded as execFile's (`Command failed: git …` and git's stderr), for callers whose messages users already see. */
export const commandFailed = (file: string, args: readonly string[], r: Run): RunError =>
  new RunError(`Command failed: ${[file, ...args].join(' ')}\n${r.stderr}`, r);
