// How `runs show` and `runs watch` print a run: a heading and a row per card.
import type { DispatchRun } from '../../contract/types.js';

export function runLines(run: DispatchRun): { head: string[]; rows: string[][] } {
  const head = [
    `run ${run.id} · ${run.command} · ${run.status}${run.stopReason ? ` (${run.stopReason})` : ''}`,
    `started ${run.startedAt}${run.endedAt ? ` · ended ${run.endedAt}` : ''} · seq ${run.seq}${run.agent ? ` · agent ${run.agent}` : ''}`,
  ];
  const runner = runnerLine(run.agentInstance);
  if (runner) head.push(runner);
  const rows = run.cards.map((c) => [c.workItemKey, c.disposition, c.exitCode === null ? '' : String(c.exitCode), c.sessionBranch ?? '', c.skipReason ?? '']);
  return { head, rows };
}

/**
 * The runner the local service's hosted executor started (`agentInstance`, whose inner shape the
 * contract leaves open): read tolerantly, shown only when it names an engine.
 */
function runnerLine(instance: unknown): string | null {
  if (!instance || typeof instance !== 'object') return null;
  const r = instance as Record<string, unknown>;
  if (typeof r.engine !== 'string' || typeof r.name !== 'string') return null;
  const parts = [`runner ${r.engine} ${r.name}`];
  if (typeof r.state === 'string') parts.push(typeof r.exitCode === 'number' ? `${r.state} ${r.exitCode}` : r.state);
  if (typeof r.error === 'string' && r.error) parts.push(r.error);
  if (typeof r.logs === 'string' && r.logs) parts.push(`logs ${r.logs}`);
  return parts.join(' · ');
}
