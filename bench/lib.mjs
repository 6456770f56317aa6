// What the benchmarks share: the built CLI and local service, timing and memory probes, a scratch
// folder per run, and the rows of the final table. Every figure is a ratio or a count of things
// measured side by side in one run; nothing here is a test.
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, readSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '..');
export const BIN = process.env.BENCH_BIN || join(ROOT, 'bin', 'svc.js');
export const NODE = process.execPath;

/** One line of the table. `pass` null: shown for context, never gates. */
export function row(figure, measured, goal, pass, note = '') {
  return { figure, measured, goal, pass, note };
}

export const median = (xs) => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

export const ms = (n) => `${n.toFixed(1)} ms`;
export const mb = (bytes) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
export const x = (n) => `${n.toFixed(2)}×`;

const scratch = [];
/** A temporary folder removed when the benchmarks end. */
export function tempDir(prefix) {
  const dir = mkdtempSync(join(tmpdir(), `svc-bench-${prefix}-`));
  scratch.push(dir);
  return dir;
}
export function cleanup() {
  for (const dir of scratch.splice(0)) rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
}

/** Runs a program to its end (synchronously); returns its wall time in ms and its output. */
export function timed(cmd, args, opts = {}) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, timeout: 120_000, ...opts });
  const wallMs = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.error) throw r.error;
  return { wallMs, status: r.status, stdout: r.stdout, stderr: r.stderr };
}

export function git(cwd, ...args) {
  const r = spawnSync('git', args, { cwd, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
}

/** A repository with one commit on main, as the agents' workspace. */
export function makeRepo() {
  const dir = tempDir('repo');
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, '-c', 'user.name=bench', '-c', 'user.email=bench@example.invalid', 'commit', '-q', '--allow-empty', '-m', 'init');
  return dir;
}

/** The environment of a `svc` child: its own config and state folders, the service and token. */
export function svcEnv(service, extra = {}) {
  const home = tempDir('home');
  const env = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('SVC_') && k !== 'CI') env[k] = v;
  return {
    ...env,
    HOME: home,
    SVC_CONFIG_DIR: join(home, 'config'),
    SVC_STATE_DIR: join(home, 'state'),
    NO_COLOR: '1',
    // A developer's own machine: svc runs as the developer and agents with the developer's rights.
    // As root (CI, this bench here) svc would hand agents to an unprivileged user by default; that
    // path is measured on its own (per-card.mjs), not folded into every figure.
    SVC_AGENT_USER: 'none',
    ...(service ? { SVC_BASE_URL: service.url, SVC_TOKEN: service.token, SVC_PROJECT: service.projectKey } : {}),
    ...extra,
  };
}

/**
 * Reads a live process's /proc files through descriptors opened once: the fleet samples 16 workers
 * every 25 ms in the thread that also serves them, and an open and a close per file per sample
 * cost that thread about twice as much. Each read answers null once the process is gone.
 */
function procReader(pid) {
  const buf = Buffer.alloc(4096);
  const fds = new Map();
  const read = (name) => {
    try {
      let fd = fds.get(name);
      if (fd === undefined) {
        fd = openSync(`/proc/${pid}/${name}`, 'r');
        fds.set(name, fd);
      }
      return buf.toString('latin1', 0, readSync(fd, buf, 0, buf.length, 0));
    } catch {
      return null;
    }
  };
  return {
    /** Peak RSS (VmHWM), in bytes. */
    peakRss() {
      const m = /VmHWM:\s+(\d+) kB/.exec(read('status') ?? '');
      return m ? Number(m[1]) * 1024 : null;
    },
    /** CPU time (user + system) used so far, in ms. */
    cpuMs() {
      const fields = read('stat')?.split(') ')[1]?.split(' ');
      return fields ? ((Number(fields[11]) + Number(fields[12])) * 1000) / 100 : null; // utime, stime in ticks of 1/100 s
    },
    close() {
      for (const fd of fds.values()) closeSync(fd);
      fds.clear();
    },
  };
}

/**
 * Runs `svc ARGS` to its end without blocking this process's event loop (the local service may live
 * here), sampling the svc process's CPU and (unless `rss: false`) its peak RSS until it exits. Ends
 * it after `timeoutMs`. The fleet reads no RSS: it samples 16 workers every 25 ms in the thread that
 * also serves them, and a read of /proc/PID/status costs 11-13 µs of CPU where one of stat costs 5.
 */
export function runSvc(args, { env, cwd, timeoutMs = 300_000, rss = true } = {}) {
  return new Promise((done, fail) => {
    const t0 = process.hrtime.bigint();
    const child = spawn(NODE, [BIN, ...args], { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let peak = 0;
    let cpuMs = 0;
    child.stdout.setEncoding('utf8').on('data', (d) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d) => (stderr = (stderr + d).slice(-64 * 1024)));
    const proc = procReader(child.pid);
    const sample = () => {
      const v = rss ? proc.peakRss() : null;
      if (v !== null) peak = Math.max(peak, v);
      cpuMs = proc.cpuMs() ?? cpuMs;
    };
    const sampler = setInterval(sample, 25);
    const killer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', fail);
    child.on('exit', (code, signal) => {
      clearInterval(sampler);
      proc.close();
      clearTimeout(killer);
      const wallMs = Number(process.hrtime.bigint() - t0) / 1e6;
      child.on('close', () => done({ code, signal, stdout, stderr, wallMs, peakRss: peak, cpuMs }));
    });
  });
}

/** `JSON.parse` of svc's --json document, with its stderr when it is not one. */
export function summaryOf(r) {
  try {
    return JSON.parse(r.stdout);
  } catch {
    throw new Error(`svc exited ${r.code ?? r.signal} without a JSON summary:\n${r.stderr.slice(-2000)}`);
  }
}

/**
 * The local service in this process (dist/server.js), with one workspace, project BENCH, a member
 * and an all-scope token. The rate limit is lifted: the benchmarks measure speed, not the limiter.
 */
export async function startService(opts = {}) {
  // BENCH_SERVER: another build's dist/server.js, to measure a before beside an after.
  const { startServer } = await import(process.env.BENCH_SERVER || join(ROOT, 'dist', 'server.js'));
  const service = await startServer({ config: { rateLimit: 1_000_000, ...opts.config }, logError: () => {}, ...opts.start });
  const { admin } = service;
  const ws = admin.createWorkspace({ name: 'Bench', slug: 'bench' });
  const user = admin.createUser({ name: 'Bench', email: 'bench@example.invalid' });
  admin.addMember(ws.id, user.id);
  admin.createProject({ workspaceId: ws.id, key: 'BENCH', name: 'Bench' });
  const { token } = admin.createToken({ workspaceId: ws.id, userId: user.id });
  return { ...service, service, token, projectKey: 'BENCH', workspaceId: ws.id, userId: user.id, close: () => service.close() };
}

/** Reads a run's journal (SVC_STATE_DIR/runs/<id>/journal.jsonl) as records. */
export function journalOf(env, runId) {
  const text = readFileSync(join(env.SVC_STATE_DIR, 'runs', runId, 'journal.jsonl'), 'utf8');
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => ({ line, r: JSON.parse(line) }));
}
