// The hosted executor of the local service (`svc server --hosted-executor ENGINE`): when a hosted
// run is opened, it starts one runner for it on an existing engine (Podman, Docker, Kubernetes):
// the svc image running `svc attach` with SVC_BASE_URL, SVC_RUN_ID and a freshly minted run
// credential. It records the runner (hosted_runners, shown as the run's `agentInstance`), keeps
// its output in a log file, and when the runner ends without having closed its run, closes the
// run itself: `failed` (or `timed_out` past the deadline), never `succeeded`.
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Database } from '../db.js';
import { closeRun } from '../dispatch-runs/close.js';
import { mintRunCredential } from '../dispatch-runs/index.js';
import { getRunRow } from '../dispatch-runs/store.js';
import { ServiceError } from '../kernel.js';
import { kubernetesEngine, type KubernetesEngineOptions } from './kubernetes.js';
import { localEngine } from './local-engine.js';
import { recordRunner, updateRunner } from './store.js';
import type { HostedEngine, HostedEngineName, RunnerHandle, RunnerSpec } from './types.js';

export { HOSTED_ENGINES, HostedEngineError, type HostedEngineName } from './types.js';
export { runnerOf, type HostedRunner } from './store.js';

export interface HostedExecutorOptions {
  engine: HostedEngineName;
  image: string;
  /** `svc attach --agent-cmd CMD` for runs that name no agent preset. */
  agentCmd?: string;
  /** SVC_BASE_URL as runners reach the service; default the service's own URL. */
  baseUrl?: string;
  /** Print what would be started (stdout) and start nothing; the run stays open. */
  dryRun?: boolean;
  /** A run's deadline (default 60 minutes). */
  timeoutMs?: number;
  /** Where runners' logs are kept (0700); default beside the database (runnerLogDir). */
  logDir?: string;
  /** `--network` of podman and docker (default bridge: a namespace of its own; never the host's). */
  network?: string;
  kubernetes?: Partial<KubernetesEngineOptions>;
  /** The environment the engine's commands run with (CONTAINERS_CONF, DOCKER_HOST, …). */
  env?: NodeJS.ProcessEnv;
}

export interface HostedExecutor {
  readonly engine: HostedEngineName;
  readonly logDir: string | null;
  /** Starts the runner of a freshly opened hosted run; resolves once it has ended. */
  launch(runId: string): Promise<void>;
  /** Stops every runner still going and waits for them. */
  stop(): Promise<void>;
}

export interface ExecutorDeps {
  db: Database;
  now(): Date;
  /** The service's own URL. */
  url: string;
  /** The service's database file; none when it is in memory. */
  dbFile?: string;
  /** One line to the operator (the server's stderr). */
  log(line: string): void;
  /** The dry run's output (the server's stdout). */
  print(text: string): void;
}

const DEFAULT_TIMEOUT_MS = 60 * 60_000;

async function engineFor(opts: HostedExecutorOptions): Promise<HostedEngine> {
  if (opts.engine === 'kubernetes') {
    return kubernetesEngine({ pollMs: 5_000, ttlSecondsAfterFinished: 3_600, ...opts.kubernetes });
  }
  return localEngine(opts.engine, { ...(opts.network ? { network: opts.network } : {}), env: opts.env });
}

/**
 * Where runners' logs live: `--hosted-logs`, else beside the database (`<db>.runners`, 0700), kept
 * as long as the runs' records are (the service never deletes a run). An in-memory database's runs
 * end with the server: their logs go to a temp folder that stop() removes.
 */
function runnerLogDir(opts: HostedExecutorOptions, dbFile: string | undefined): { dir: string; ephemeral: boolean } {
  if (opts.logDir) {
    mkdirSync(opts.logDir, { recursive: true, mode: 0o700 });
    return { dir: opts.logDir, ephemeral: false };
  }
  if (dbFile && dbFile !== ':memory:') {
    const dir = `${resolve(dbFile)}.runners`;
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    chmodSync(dir, 0o700);
    return { dir, ephemeral: false };
  }
  return { dir: mkdtempSync(join(tmpdir(), 'svc-runners-')), ephemeral: true };
}

/** Makes the executor after checking that its engine answers and can run the image (HostedEngineError otherwise). */
export async function createHostedExecutor(opts: HostedExecutorOptions, deps: ExecutorDeps): Promise<HostedExecutor> {
  const engine = await engineFor(opts);
  if (!opts.dryRun) await engine.preflight(opts.image);
  const logs = opts.dryRun ? null : runnerLogDir(opts, deps.dbFile);
  const logDir = logs?.dir ?? null;
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const live = new Map<string, { handle: RunnerHandle; ended: Promise<void> }>();
  // Runners being started: stop() waits for them, so none is left running behind a closed service.
  const starting = new Set<Promise<unknown>>();
  let stopping = false;
  const baseUrl = opts.baseUrl ?? deps.url;

  /** Closes a run its runner left open; a run the runner closed answers RUN_CLOSED and stays as it is. */
  function closeLeftOpen(runId: string, timedOut: boolean): boolean {
    try {
      closeRun(deps.db, runId, 'abandoned', timedOut ? 'timed_out' : 'failed', deps.now());
      return true;
    } catch (error) {
      if (error instanceof ServiceError && error.code === 'RUN_CLOSED') return false;
      throw error;
    }
  }

  async function launch(runId: string): Promise<void> {
    if (stopping) return;
    const run = getRunRow(deps.db, runId);
    if (!run || run.origin !== 'hosted' || run.status !== 'running') return;
    // A run naming a preset runs it (attach reads the run's agent); --hosted-agent-cmd serves the rest.
    const agentArgs = opts.agentCmd && (!run.agent || run.agent === 'custom') ? ['--agent-cmd', opts.agentCmd] : [];
    const spec: RunnerSpec = { runId, name: engine.runnerName(runId), image: opts.image, baseUrl, args: ['attach', ...agentArgs], timeoutMs };
    const base = { engine: engine.name, name: spec.name, image: spec.image };
    if (opts.dryRun || !logDir) {
      recordRunner(deps.db, runId, { ...base, state: 'dry run', logs: null }, deps.now());
      deps.print(`${engine.describe(spec)}\n`);
      return;
    }
    const logFile = join(logDir, `${runId}.log`);
    recordRunner(deps.db, runId, { ...base, state: 'starting', logs: logFile }, deps.now());
    let handle: RunnerHandle;
    // (A run closed meanwhile refuses the credential: that, too, is a runner that did not start.)
    const started = (async () => engine.start(spec, mintRunCredential(deps.db, runId, deps.now()), logFile))();
    starting.add(started);
    try {
      handle = await started;
    } catch (error) {
      const line = (error as Error).message;
      updateRunner(deps.db, runId, { state: 'failed to start', error: line, ended: deps.now() });
      if (closeLeftOpen(runId, false)) deps.log(`svc server: runner of ${runId} did not start: ${line}; the run is closed failed`);
      return;
    } finally {
      starting.delete(started);
    }
    updateRunner(deps.db, runId, { state: 'running' });
    // The deadline: the service closes the run timed_out itself, then stops the runner (which
    // would otherwise close it `interrupted` on the signal). Kubernetes' activeDeadlineSeconds is
    // a minute later, a backstop for a service that is gone.
    let timedOut = false;
    const deadline = setTimeout(() => {
      timedOut = true;
      try {
        if (closeLeftOpen(runId, true))
          deps.log(`svc server: run ${runId} passed its deadline (${Math.round(timeoutMs / 1000)} s): closed timed_out, its runner stopped; logs ${logFile}`);
      } catch (error) {
        deps.log(`svc server: closing ${runId} at its deadline: ${(error as Error).message}`);
      }
      void handle.stop();
    }, timeoutMs);
    deadline.unref();
    const ended = handle.exited.then(recordExit).catch((error) => deps.log(`svc server: runner of ${runId}: ${(error as Error).message}`));
    function recordExit(exit: Awaited<RunnerHandle['exited']>): void {
      clearTimeout(deadline);
      live.delete(runId);
      const late = timedOut || exit.timedOut;
      updateRunner(deps.db, runId, { state: late ? 'timed out' : 'exited', exitCode: exit.exitCode, error: exit.error, ended: deps.now() });
      if (closeLeftOpen(runId, late)) {
        const why = exit.error ?? (late ? 'its deadline passed' : `exit ${exit.exitCode ?? 'unknown'}`);
        deps.log(`svc server: runner of ${runId} ended without closing its run (${why}); the run is closed ${late ? 'timed_out' : 'failed'}; logs ${logFile}`);
      }
    }
    live.set(runId, { handle, ended });
    await ended;
  }

  return {
    engine: engine.name,
    logDir,
    launch,
    async stop() {
      stopping = true;
      await Promise.allSettled([...starting]);
      const runners = [...live.values()];
      await Promise.all(runners.map((r) => r.handle.stop()));
      await Promise.all(runners.map((r) => r.ended));
      if (logs?.ephemeral) rmSync(logs.dir, { recursive: true, force: true });
    },
  };
}
