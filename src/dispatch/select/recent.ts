// What earlier local runs did to each card, read from the journals of the state folder: `auto`
// skips cards that failed recently (unless --retry-failed), and work advances past cards already
// implemented (prior-work.ts).
import { existsSync } from 'node:fs';
import { Journal } from '../wire/journal.js';
import { listRunRecords, runPaths, type RunRecord } from '../state/folder.js';

/** One leg's end as a local journal recorded it. */
export interface RecordedLegEnd {
  record: RunRecord;
  key: string;
  disposition: 'implemented' | 'failed';
}

/** Every implemented or failed leg of local runs of `projectKey` opened since `sinceMs`, in journal order per run. */
export function* recordedLegEnds(stateDir: string, projectKey: string, sinceMs = 0): Generator<RecordedLegEnd> {
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
            yield { record, key: ev.workItemKey, disposition: ev.disposition };
          }
        }
      }
    } finally {
      journal.close();
    }
  }
}

/** Keys whose latest recorded leg, in runs of `projectKey` opened since `sinceMs`, ended failed. */
export function recentFailures(stateDir: string, projectKey: string, sinceMs: number): Set<string> {
  const last = new Map<string, string>();
  for (const leg of recordedLegEnds(stateDir, projectKey, sinceMs)) last.set(leg.key, leg.disposition);
  return new Set([...last].filter(([, d]) => d === 'failed').map(([k]) => k));
}
