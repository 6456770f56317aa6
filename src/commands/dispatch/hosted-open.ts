// `--hosted`: select the card set exactly as a local run would, then open the run with
// `origin: hosted` for a hosted runner to execute, and run nothing here.
import type { DispatchRunOpen, DispatchRunOpened } from '../../contract/types.js';
import type { DispatchOptions } from '../../dispatch/lifecycle/types.js';
import type { DispatchService } from '../../dispatch/ports.js';
import { selectCards } from '../../dispatch/select/index.js';
import { readRunRecord } from '../../dispatch/state.js';
import { UsageError } from '../exit-codes.js';

export async function openHosted(
  opts: DispatchOptions,
  deps: { service: DispatchService; stateDir: string; openHostedRun(body: DispatchRunOpen): Promise<DispatchRunOpened> },
): Promise<DispatchRunOpened> {
  if (opts.command === 'auto') throw new UsageError('auto loops over runs on this machine; open hosted runs with batch or next instead');
  const selection = await selectCards(
    { command: opts.command, projectKey: opts.projectKey, keys: opts.keys, ...(opts.lanes ? { lanes: opts.lanes } : {}), ...(opts.maxCards ? { max: opts.maxCards } : {}) },
    {
      service: deps.service,
      localRun: (runId) => {
        const r = readRunRecord(deps.stateDir, runId);
        return r ? { originalCommand: r.originalCommand, scopeKey: r.scopeKey } : null;
      },
    },
  );
  if (selection.empty) throw Object.assign(new Error(selection.note), { exitCode: 0 });
  const agentName = opts.agent.agent ?? (opts.agent.agentCmd ? 'custom' : undefined);
  return deps.openHostedRun({
    projectKey: opts.projectKey,
    command: selection.command,
    origin: 'hosted',
    ...(selection.scopeKey ? { scopeKey: selection.scopeKey } : {}),
    ...(agentName ? { agent: agentName } : {}),
    ...(opts.agent.model ? { model: opts.agent.model } : {}),
    ...(opts.idempotencyKey ? { idempotencyKey: opts.idempotencyKey } : {}),
    cards: selection.cards.map((c) => ({ workItemKey: c.key, ...(c.skipReason ? { skipReason: c.skipReason } : {}) })),
  });
}
