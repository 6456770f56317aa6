// How `runs show` and `runs watch` print a run: a heading and a row per card.
import type { DispatchRun } from '../../contract/types.js';

export function runLines(run: DispatchRun): { head: string[]; rows: string[][] } {
  const head = [`run ${run.id} · ${run.command} · ${run.status}${run.stopReason ? ` (${run.stopReason})` : ''}`, `started ${run.startedAt}${run.endedAt ? ` · ended ${run.endedAt}` : ''} · seq ${run.seq}${run.agent ? ` · agent ${run.agent}` : ''}`];
  const rows = run.cards.map((c) => [c.workItemKey, c.disposition, c.exitCode === null ? '' : String(c.exitCode), c.sessionBranch ?? '', c.skipReason ?? '']);
  return { head, rows };
}
