// Runs an open run to its close, in the shape of the Buildkite agent's job runner: the local state
// first, then the run's watchers (event stream, heartbeat, signal, timeout: RunStops), the legs
// (LegScheduler), the close-out, a pure decision of the close (decideClose, docs/dispatch.md), and the
// closer that sends it.
import type { DispatchRun } from '../../contract/types.js';
import { EventStream } from '../wire/event-stream.js';
import { startHeartbeat } from '../wire/heartbeat.js';
import { RunClosedError, isRunClosed, serviceErrorOf } from '../ports.js';
import { holdLegsRoot } from '../boundary/leg-folder.js';
import { processStart } from '../state/run-lock.js';
import type { Selection } from '../select/types.js';
import { stateFolderFault } from '../state/folder.js';
import { decideClose, endedByCommand, runExitCode } from './close-decision.js';
import { closeAsDecided } from './closer.js';
import { runCloseOut } from './close-out.js';
import type { LegContext } from '../leg-context.js';
import { openLocalState, type LocalState } from './local-state.js';
import { RunStops } from './run-stops.js';
import { LegScheduler } from './scheduler.js';
import type { DispatchDeps, DispatchOptions, RunSummary } from './types.js';

/** What `executeRun` runs: a run that is open on the service, and its card set. */
export interface ExecuteInput {
  run: DispatchRun;
  selection: Selection;
  /**
   * The run existed before this invocation (an adopted idempotency key, a hosted run): its legs
   * already `implemented` count as landed, and a state folder left by an earlier attempt is reused.
   */
  resumed: boolean;
  /** Recorded in run.json; null for a run this client did not open (hosted). */
  idempotencyKey: string | null;
  /**
   * auto: whether more is ready beyond what the invocation took (docs/dispatch.md: `completed` and the
   * loop goes on, else `drained`). Asked only when the legs ran out.
   */
  moreReady?(selection: Selection): Promise<boolean>;
  /** Recorded in run.json's options (hosted runs say so, for `svc runs recover`). */
  origin?: 'local' | 'hosted';
  /** The pending record written before the open: removed once run.json holds the run. */
  pendingPath?: string | null;
}

/** The stream, the heartbeat and the run's own signal and timeout, each feeding RunStops. */
function watch(opts: DispatchOptions, deps: DispatchDeps, run: DispatchRun, local: LocalState, stops: RunStops) {
  const { service, output } = deps;
  const onClosed = (e: RunClosedError) => {
    stops.closed(e);
    // Nothing more is sent once the service has closed the run (reads only).
    void stream.stop();
  };
  const giveUp = opts.giveUpAfterMs !== undefined ? { giveUpAfterMs: opts.giveUpAfterMs } : {};
  const stream = new EventStream({
    service,
    runId: run.id,
    journal: local.journal,
    baseSeq: local.record.baseSeq,
    ...(opts.flushIntervalMs ? { flushIntervalMs: opts.flushIntervalMs } : {}),
    ...giveUp,
    onClosed,
    onFailed: (e) => {
      const folder = stateFolderFault(e, deps.stateDir);
      if (folder && stops.failure === null) output.warn(`${folder.message}: stopping the run (free some space, then \`svc continue ${run.id}\`)`);
      stops.failed(folder ?? e);
    },
    warn: (m) => output.warn(m),
  });
  // Hosted runs send no heartbeat: heartbeatDispatchRun is not among the run credential's operations.
  const heartbeat =
    opts.heartbeat === false
      ? { stop: async () => undefined }
      : startHeartbeat({
          service,
          runId: run.id,
          intervalMs: opts.heartbeatIntervalMs,
          onClosed,
          warn: (m) => output.warn(m),
          // A service unreachable past --max-wait stops the run as an append past it does.
          ...giveUp,
          onFailed: (e) => stops.failed(e),
        });
  const onSignal = () => stops.abort(deps.signal.reason);
  if (deps.signal.aborted) onSignal();
  else deps.signal.addEventListener('abort', onSignal, { once: true });
  const runTimer = opts.timeouts.runMs ? setTimeout(() => stops.timeoutReached(), opts.timeouts.runMs) : null;
  const unwatch = () => {
    if (runTimer) clearTimeout(runTimer);
    deps.signal.removeEventListener('abort', onSignal);
  };
  return { stream, heartbeat, unwatch };
}

/** run_scope's close-out once its legs landed (docs/dispatch.md); a failure to run it is reported, not fatal. */
async function closeOutOf(ctx: LegContext, selection: Selection): Promise<RunSummary['closeOut']> {
  const { deps } = ctx;
  if (!selection.closeOut || !selection.scopeKey) return null;
  try {
    const r = await runCloseOut(ctx, await deps.service.getWorkItem(selection.scopeKey));
    if (r.outcome === 'failed') deps.output.warn(`close-out of ${selection.scopeKey} failed: ${r.reason ?? 'failed'}`);
    return { outcome: r.outcome, exitCode: r.exitCode, reason: r.reason };
  } catch (error) {
    if (error instanceof RunClosedError || isRunClosed(error)) throw error;
    deps.output.warn(`close-out of ${selection.scopeKey} could not run: ${serviceErrorOf(error).message ?? String(error)}`);
    return { outcome: 'failed', exitCode: null, reason: serviceErrorOf(error).message ?? 'error' };
  }
}

/** Runs the legs of an open run and closes it with an explicit status. */
export async function executeRun(opts: DispatchOptions, deps: DispatchDeps, input: ExecuteInput): Promise<RunSummary> {
  const { run, selection } = input;
  const local = await openLocalState(opts, deps, input);
  const stops = new RunStops();
  const { stream, heartbeat, unwatch } = watch(opts, deps, run, local, stops);
  deps.output.info(
    `run ${run.id} ${input.resumed ? 'resumed' : 'opened'} (${selection.command}${selection.scopeKey ? ` ${selection.scopeKey}` : ''}): ${selection.note}`,
  );

  const landed = input.resumed ? run.cards.filter((c) => c.disposition === 'implemented').map((c) => c.workItemKey) : [];
  const legs = new LegScheduler({ opts, deps, selection, signal: stops.signal, landed });
  const { journal } = local;
  const ctx: LegContext = {
    runId: run.id,
    command: selection.command,
    mode: selection.mode,
    opts,
    deps,
    stream,
    paths: local.paths,
    signal: stops.signal,
    onSpend: (key, usd) => legs.onSpend(key, usd),
    onAgentGroup: (key, event, pgid) => (event === 'start' ? journal.agentStarted(key, pgid, processStart(pgid)) : journal.agentEnded(pgid)),
  };
  let closeOut: RunSummary['closeOut'] = null;
  const releaseLegsRoot = opts.agentUser ? holdLegsRoot() : () => {};
  try {
    await legs.run(ctx);
    if (!legs.halted() && legs.landed.size > 0) closeOut = await closeOutOf(ctx, selection);
  } catch (error) {
    // A read that failed past the client's retries: stop starting legs, let running ones end.
    stops.abort(error);
    await legs.settle();
    if (!stops.closedByServer) stops.failed(error);
  } finally {
    releaseLegsRoot();
    unwatch();
  }

  const interrupted = stops.interruptedBy(deps.signal);
  const stopped = { timedOut: stops.timedOut, interrupted, failed: Boolean(stops.failure), stop: legs.stop };
  let moreReady: boolean | undefined;
  // Asking whether more is ready costs a read: only when the answer decides the stop. A read
  // failing past the retries is a fault as one during the legs is: the run still closes.
  if (input.moreReady && endedByCommand(stopped)) {
    try {
      moreReady = await input.moreReady(selection);
    } catch (error) {
      stops.failed(error);
    }
  }
  const decision = decideClose({
    command: selection.originalCommand,
    capped: selection.capped,
    ...(moreReady !== undefined ? { moreReady } : {}),
    ...stopped,
    failed: Boolean(stops.failure),
    failedLegs: legs.failed.size,
  });
  const exitCode = runExitCode({
    status: decision.status,
    timedOut: stops.timedOut,
    failure: stops.failure,
    ...(interrupted ? { interrupted: { reason: deps.signal.reason } } : {}),
  });

  return closeAsDecided(opts, deps, {
    run,
    selection,
    legs: legs.legs,
    closeOut,
    local,
    stream,
    heartbeat,
    stops,
    decision,
    exitCode,
    hurried: interrupted || stops.timedOut,
  });
}
