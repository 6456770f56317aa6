// `auto` skips cards that failed in recent local runs (unless --retry-failed): the journals of the
// state folder say which legs ended `failed` and were not implemented since.
import { existsSync } from 'node:fs';
import { Journal } from '../journal.js';
import { listRunRecords, runPaths } from '../state.js';

/** Keys whose latest recorded leg, in runs of `projectKey` opened since `sinceMs`, ended failed. */
export function recentFailures(stateDir: string, projectKey: string, sinceMs: number): Set<string> {
  const last = new Map<string, string>();
  for (const record of listRunRecords(stateDir)) {
    if (record.projectKey !== projectKey || Date.parse(record.openedAt) < sinceMs) continue;
    const path = runPaths(stateDir, record.runId).journal;
    if (!existsSync(path)) continue;
    const journal = Journal.open(path);
    try {
      const reader = journal.reader(0);
      for (let batch = reader.read(500, 4 << 20); batch.length > 0; batch = reader.read(500, 4 << 20)) {
        for (const { ev } of batch) {
          if (ev.workItemKey && (ev.disposition === 'failed' || ev.disposition === 'implemented')) {
            last.set(ev.workItemKey, ev.disposition);
          }
        }
      }
    } finally {
      journal.close();
    }
  }
  return new Set([...last].filter(([, d]) => d === 'failed').map(([k]) => k));
}
