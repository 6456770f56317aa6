// The dispatch engine's one front door: src/commands takes values from here and nowhere else in
// src/dispatch (types it may take from anywhere; test/architecture/engine-door.test.ts holds it to
// that). Exported directly: what is small, since every command loads it (the config store reads
// some of it). Behind a function: the rest, each part loaded on its first call, so a command loads
// no more of the engine than it uses: a run in each of its modes (start.ts), the checks before a
// run (loadEngine, engine.ts), the reports, and the queries of this machine's runs.
import type { ApiClient } from '../api/client.js';
import type { PruneResult } from './git/worktree.js';
import type { HostedExecution } from './hosted/execution.js';
import type { DispatchOptions, RunSummary } from './lifecycle/types.js';
import type { EngineContext, HostedOpen, HostedPullRequests } from './start.js';
import type { RunRecord } from './state/folder.js';
import type { RecoverDeps, RecoverResult } from './state/recover.js';
import type { CancelOutcome, LocalRunRow } from './state/runs.js';

export { parseDuration } from './duration.js';
export { MAX_ATTEMPTS, readRecordedOptions } from './options.js';
export { flag, rephrase } from './flags/row.js';
export { usd, wholeNumber } from './flags/kinds.js';
export { AUTO_FLAGS, DISPATCH_FLAG, DISPATCH_FLAGS, LANE_FLAGS, PULL_REQUEST_FLAGS, RERUN_FLAGS } from './flags/table.js';
export { defaultDispatchOptions, fillOptions, hostedRefusal, replayFlags } from './flags/fill.js';
export { AGENT_NAMES, AGENT_PRESETS, checkAgentChoice, isAgentName } from './agent/presets.js';
export { AGENT_FORMATS, streamOf } from './agent/spend.js';
export { splitCommand } from './agent/argv.js';
export { agentEnvNameProblem } from './agent/env.js';
export { AGENT_USER_SYNTAX, AgentUserError, resolveAgentUser } from './boundary/user.js';
export { makeDirs } from './state/make-dirs.js';
export { describeFsError, listRunRecords, logPath, readRunRecord, resolveStateDir, runPaths } from './state/folder.js';
export { isRunLive, liveRuns } from './state/run-lock.js';
export { refusalLine } from './fence/refusal.js';

/** A run selected and opened here, executed and closed (`auto`: a run per round). */
export async function startDispatch(opts: DispatchOptions, ctx: EngineContext): Promise<RunSummary> {
  return (await import('./start.js')).startDispatch(opts, ctx);
}

/** `--hosted`: the run opened for a hosted runner, or why none was; nothing runs here. */
export async function openHostedRun(opts: DispatchOptions, ctx: Pick<EngineContext, 'client' | 'stateDir'>): Promise<HostedOpen> {
  return (await import('./start.js')).openHostedRun(opts, ctx);
}

/** Inside a hosted runner: the run it was handed, executed through the run's own credential. */
export async function startHostedRun(
  opts: DispatchOptions,
  h: HostedExecution,
  ctx: Pick<EngineContext, 'stateDir' | 'output' | 'signal'> & { pullRequests: HostedPullRequests },
): Promise<RunSummary> {
  return (await import('./start.js')).startHostedRun(opts, h, ctx);
}

/** The checks before a run (its base, identity, workflow, network) and a hosted runner's side (engine.ts). */
export function loadEngine(): Promise<typeof import('./engine.js')> {
  return import('./engine.js');
}

/**
 * A hosted run's side (docs/hosted.md): its execution prepared from the environment, its cards'
 * repositories. Apart from loadEngine, so a local run never loads simple-git and the broker.
 */
export function loadHosted(): Promise<Pick<typeof import('./hosted/index.js'), 'isHostedEnvironment' | 'prepareHostedExecution' | 'targetRepositoriesOf'>> {
  return import('./hosted/index.js');
}

/** `svc logs`: the readable lines of each agent format's stream (agent/streams/render.ts). */
export function loadStreamRenderers(): Promise<typeof import('./agent/streams/index.js')> {
  return import('./agent/streams/index.js');
}

/** `--report` and `svc runs report`: the reports of runs, from the state folder (report/index.ts). */
export function loadReports(): Promise<typeof import('./report/index.js')> {
  return import('./report/index.js');
}

/** `svc runs list`: this machine's runs, newest first. */
export async function listLocalRuns(stateDir: string): Promise<LocalRunRow[]> {
  return (await import('./state/runs.js')).listLocalRuns(stateDir);
}

/** `svc logs RUN`: the keys of a run's leg logs, in run order (the close-out last). */
export async function logsInRunOrder(stateDir: string, runId: string): Promise<string[]> {
  return (await import('./state/runs.js')).logsInRunOrder(stateDir, runId);
}

/** `svc runs cancel RUN`: closes a run nobody is running (state/runs.ts). */
export async function cancelLocalRun(client: ApiClient, stateDir: string, runId: string): Promise<CancelOutcome> {
  const [{ cancelRun }, { dispatchServiceOf }] = await Promise.all([import('./state/runs.js'), import('./wire/service.js')]);
  return cancelRun(dispatchServiceOf(client), stateDir, runId);
}

/** `svc runs recover [RUN]`: each run through a client of its recorded service, or skipped (null). */
export async function recoverLocalRuns(
  deps: Omit<RecoverDeps, 'serviceFor'> & { clientFor(record: Pick<RunRecord, 'baseUrl' | 'projectKey'>): ApiClient | null },
  runId?: string,
): Promise<RecoverResult[]> {
  const [{ recoverRuns }, { dispatchServiceOf }] = await Promise.all([import('./state/recover.js'), import('./wire/service.js')]);
  const { clientFor, ...rest } = deps;
  const serviceFor: RecoverDeps['serviceFor'] = (record) => {
    const client = clientFor(record);
    return client ? dispatchServiceOf(client) : null;
  };
  return recoverRuns({ ...rest, serviceFor }, runId);
}

/** `svc worktrees prune`: removes the clean worktrees of finished cards (git/worktree.ts). */
export async function pruneWorktrees(opts: Parameters<typeof import('./git/worktree.js').pruneWorktrees>[0]): Promise<PruneResult> {
  return (await import('./git/worktree.js')).pruneWorktrees(opts);
}

/** Agents' leg folders (svc as root) whose svc is gone, removed; their paths. */
export async function removeOrphanLegs(): Promise<string[]> {
  return (await (await import('./boundary/orphans.js')).removeOrphanLegs()).removed;
}

/** The network fences (nftables tables, as root) of svc processes that are gone, removed; their names. */
export async function removeStaleFences(): Promise<string[]> {
  return (await import('./fence/nft.js')).removeStaleTables();
}

/** `svc git-credential`: answers git from the hosted run's credential broker (hosted/credential-helper.ts). */
export async function runGitCredential(...args: Parameters<typeof import('./hosted/index.js').runGitCredential>) {
  return (await import('./hosted/index.js')).runGitCredential(...args);
}
