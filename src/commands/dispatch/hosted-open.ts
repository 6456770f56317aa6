// `--hosted`: select the card set exactly as a local run would, then open the run with
// `origin: hosted` for a hosted runner to execute, and run nothing here.
import type { DispatchRunOpen, DispatchRunOpened } from '../../contract/types.js';
import type { DispatchOptions } from '../../dispatch/lifecycle/types.js';
import type { DispatchService } from '../../dispatch/ports.js';
import { selectCards } from '../../dispatch/select/index.js';
import { readRunRecord } from '../../dispatch/state/folder.js';
import { UsageError } from '../exit-codes.js';

/** The run opened for a hosted runner, or why none was: an empty card set is no failure (exit 0). */
export type HostedOpen = { opened: DispatchRunOpened } | { opened: null; note: string };

export async function openHosted(
  opts: DispatchOptions,
  deps: { service: DispatchService; stateDir: string; openHostedRun(body: DispatchRunOpen): Promise<DispatchRunOpened> },
): Promise<HostedOpen> {
  if (opts.command === 'auto') throw new UsageError('auto loops over runs on this machine; open hosted runs with batch or next instead');
  const selection = await selectCards(
    {
      command: opts.command,
      projectKey: opts.projectKey,
      keys: opts.keys,
      ...(opts.lanes ? { lanes: opts.lanes } : {}),
      ...(opts.maxCards ? { max: opts.maxCards } : {}),
    },
    {
      service: deps.service,
      localRun: (runId) => {
        const r = readRunRecord(deps.stateDir, runId);
        return r ? { originalCommand: r.originalCommand, scopeKey: r.scopeKey } : null;
      },
    },
  );
  if (selection.empty) return { opened: null, note: selection.note };
  const agentName = opts.agent.agent ?? (opts.agent.agentCmd ? 'custom' : undefined);
  const opened = await deps.openHostedRun({
    projectKey: opts.projectKey,
    command: selection.command,
    origin: 'hosted',
    ...(selection.scopeKey ? { scopeKey: selection.scopeKey } : {}),
    ...(agentName ? { agent: agentName } : {}),
    ...(opts.agent.model ? { model: opts.agent.model } : {}),
    ...(opts.idempotencyKey ? { idempotencyKey: opts.idempotencyKey } : {}),
    cards: selection.cards.map((c) => ({ workItemKey: c.key, ...(c.skipReason ? { skipReason: c.skipReason } : {}) })),
  });
  return { opened };
}
