// Work advances across machines (DISPATCH §8): a leg that ended implemented records itself on its
// work item through op 9, so another machine sharing the queue does not select it again. A machine
// that selected the card before the record landed finds it when it re-reads the item before the
// leg (scheduler.ts). It never fails the leg: the work exists on its branch whatever the service
// answers.
import { basename } from 'node:path';
import { WaitBudget } from '../../api/retry.js';
import { serviceErrorOf, type WaitWithin } from '../ports.js';
import type { WorkItemDetail, WorkItemUpdate } from '../../contract/types.js';
import { splitCommand } from '../agent/argv.js';
import { isDone } from '../select/checks.js';
import { IMPLEMENTED_STATUS } from '../select/prior-work.js';
import type { LegContext } from './leg-context.js';

/** An item moved between our read and our write (412): read again, this many times at most. */
const MAX_ATTEMPTS = 3;

/** The agent that did the work: the preset's name, else the program of `--agent-cmd`. */
export function harnessOf(agent: LegContext['opts']['agent']): string | null {
  if (agent.agent) return agent.agent;
  if (!agent.agentCmd) return null;
  const program = splitCommand(agent.agentCmd)[0];
  return program ? basename(program) : null;
}

/** What op 9 is sent for `item`: the implementation always, the status only while it is not done. */
export function implementationUpdate(ctx: Pick<LegContext, 'opts'>, item: WorkItemDetail): WorkItemUpdate {
  const body: WorkItemUpdate = {
    implementationSource: 'byok',
    implementationHarness: harnessOf(ctx.opts.agent),
    implementationModel: ctx.opts.agent.model ?? null,
  };
  // A person may have closed the item while the agent worked: the record never reopens it.
  if (!isDone(item, ctx.opts.doneStatuses) && item.status !== IMPLEMENTED_STATUS) body.status = IMPLEMENTED_STATUS;
  return body;
}

/** A review changes nothing; hosted runs (the ones without heartbeats) may not write items. */
function recordsItems(ctx: Pick<LegContext, 'opts' | 'deps' | 'mode'>): boolean {
  return ctx.mode !== 'review' && ctx.opts.heartbeat !== false && Boolean(ctx.deps.service.updateWorkItem);
}

/**
 * Records an implemented leg before its disposition is sent (leg.ts): while the service still sees
 * the leg `running`, no other run can open over the card, so no machine can find it ready between
 * the two. That first try waits for nothing (no retry: a gone service must not hold the leg, whose
 * run's close is decided when the legs end); when it fails, the record is tried again with the
 * usual waits alongside the run, which closes only after it (`ctx.records`, execute.ts).
 */
export async function recordBeforeDisposition(ctx: Pick<LegContext, 'opts' | 'deps' | 'mode' | 'records'>, key: string): Promise<void> {
  if (!recordsItems(ctx) || (await recordImplementation(ctx, key, { budget: new WaitBudget(0) }))) return;
  const later = recordImplementation(ctx, key);
  if (ctx.records) ctx.records.push(later);
  else await later;
}

/**
 * Records an implemented leg of `key` on its work item (op 8 for the ETag, then op 9 with
 * `If-Match`, read again on 412). A review changes nothing, and a hosted run holds a run credential,
 * which may not write work items (DISPATCH §6): neither records. With `quick` (a budget), a failure
 * is silent: the caller tries again; otherwise a refusal is one warning.
 */
export async function recordImplementation(ctx: Pick<LegContext, 'opts' | 'deps' | 'mode'>, key: string, quick?: WaitWithin): Promise<boolean> {
  const { service, output } = ctx.deps;
  if (!recordsItems(ctx) || !service.readWorkItem || !service.updateWorkItem) return false;
  for (let attempt = 1; ; attempt++) {
    try {
      const { item, etag } = await service.readWorkItem(key, quick);
      await service.updateWorkItem(key, implementationUpdate(ctx, item), etag ?? undefined, quick);
      return true;
    } catch (error) {
      const fault = serviceErrorOf(error);
      if (fault.status === 412 && attempt < MAX_ATTEMPTS) continue;
      if (quick) return false;
      output.warn(`${key}: implemented, but the service did not record it on the item (${fault.message ?? 'no answer'}); other machines may select it again`);
      return false;
    }
  }
}
