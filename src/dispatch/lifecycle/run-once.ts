// Opens a run and runs it: the open is recorded locally first (a pending record naming its
// idempotency key), retried and reselected on a 409 (docs/dispatch.md#the-wire), and the run it opened, or the
// one its key already named, is handed to executeRun.
import { EXIT } from '../../api/errors.js';
import { randomUUID } from 'node:crypto';
import { isRetryable, serviceErrorOf } from '../ports.js';
import type { Selection } from '../select/types.js';
import { removePendingOpen, writePendingOpen } from '../state/folder.js';
import { selfMark } from '../state/run-lock.js';
import { runExitCode } from './close-decision.js';
import { executeRun, type ExecuteInput } from './execute.js';
import { recordBase } from './local-state.js';
import { openBody, openWithReselect } from './open.js';
import { isNamedCommand, nothingRanNote, recordedLegs, summaryOf } from './summary.js';
import type { DispatchDeps, DispatchOptions, RunSummary } from './types.js';

export interface RunOnceInput {
  selection: Selection;
  /** Reselects without the given keys (after a 409 on open). */
  reselect(exclude: ReadonlySet<string>): Promise<Selection>;
  /** auto: whether more is ready once the legs ran out (see ExecuteInput). */
  moreReady?: ExecuteInput['moreReady'];
  /** Hears the keys a 409 on open said another running run holds, as they are excluded. */
  onTakenElsewhere?(keys: readonly string[]): void;
  idempotencyKey?: string;
}

export async function runOnce(opts: DispatchOptions, deps: DispatchDeps, input: RunOnceInput): Promise<RunSummary> {
  const { service, output } = deps;
  if (deps.signal.aborted) {
    // Interrupted before anything was opened: nothing to close.
    return summaryOf(input.selection, null, runExitCode({ status: null, interrupted: { reason: deps.signal.reason } }), 'interrupted before the run opened');
  }
  const idempotencyKey = input.idempotencyKey ?? opts.idempotencyKey ?? randomUUID();
  const agentName = opts.agent.agent ?? 'custom';
  // The local record comes first: a pending record (no token) names the open's idempotency key,
  // so a run whose open lands while its run.json never does is still found by `svc runs recover`.
  // A state folder that cannot be written stops here, before anything is opened.
  // (An object: the path is set inside the body callback, which narrowing does not see.)
  const pending: { path: string | null } = { path: null };
  // Whether the last open sent may have created the run: a refusal (4xx) proves it did not (a
  // repeated key is answered with its run before any check could refuse it); a fault past
  // max-wait may have come after the open landed.
  let mayHaveLanded = false;
  const opener: Pick<typeof service, 'openDispatchRun'> = {
    openDispatchRun: async (body) => {
      mayHaveLanded = true;
      try {
        return await service.openDispatchRun(body);
      } catch (error) {
        if (!isRetryable(error) && !serviceErrorOf(error).ambiguous) mayHaveLanded = false;
        throw error;
      }
    },
  };
  let result: Awaited<ReturnType<typeof openWithReselect>>;
  try {
    result = await openWithReselect(
      opener,
      input.selection,
      (s) => {
        const body = openBody(s, opts.projectKey, idempotencyKey, agentName, opts.agent.model);
        // Rewritten on each reselection: recover repeats the open exactly as last sent.
        pending.path = writePendingOpen(deps.stateDir, {
          idempotencyKey,
          open: body,
          record: recordBase(opts, deps, s, idempotencyKey, 'local'),
          owner: selfMark(),
        });
        return body;
      },
      input.reselect,
      (m) => output.info(m),
      input.onTakenElsewhere,
    );
  } catch (error) {
    // No run was made: the record goes. One may have been: the record stays, and recover
    // re-opens with the key to find out.
    if (pending.path && !mayHaveLanded) removePendingOpen(pending.path);
    else if (pending.path) output.warn('the open of the run may have landed; `svc runs recover` closes the run if it did');
    throw error;
  }
  if (!result.opened) {
    const { held } = result;
    if (pending.path) removePendingOpen(pending.path);
    // Every runnable card is in another live run: a lane command leaves them to it (exit 0); a
    // command given keys ran none of them, which is no success (docs/dispatch.md).
    const taken: Selection = {
      ...input.selection,
      cards: input.selection.cards.map((c) => (c.skipReason ? c : { ...c, skipReason: held.get(c.key) ?? 'already in another running run' })),
    };
    return isNamedCommand(taken.originalCommand)
      ? summaryOf(taken, null, EXIT.failed, `${nothingRanNote(taken)}; no run opened`)
      : summaryOf(taken, null, EXIT.ok, 'every candidate is already in another running run');
  }
  const { selection } = result;
  const run = result.opened.run;
  const adopted = !result.opened.created;
  if (adopted && run.status !== 'running') {
    // A retried CI job found its finished run: report it, run nothing.
    if (pending.path) removePendingOpen(pending.path);
    output.info(`run ${run.id} already exists (idempotency key) and is ${run.status}: its legs as recorded`);
    return summaryOf(selection, run, run.status === 'failed' ? 1 : 0, 'existing run, already closed', recordedLegs(deps.stateDir, run, selection));
  }
  return executeRun(opts, deps, {
    run,
    selection,
    resumed: adopted,
    idempotencyKey,
    pendingPath: pending.path,
    ...(input.moreReady ? { moreReady: input.moreReady } : {}),
  });
}
