// What earlier local runs did to each card, read from the journals of the state folder: `auto`
// skips cards that failed recently (unless --retry-failed), and work advances past cards already
// implemented (prior-work.ts).
import { closeSync, fstatSync, openSync } from 'node:fs';
import { parse, scanLineBytes } from '../wire/journal-reader.js';
import { listRunHeads, runPaths, type RunHead } from '../state/folder.js';

/** One leg's end as a local journal recorded it. */
export interface RecordedLegEnd {
  record: RunHead;
  key: string;
  disposition: 'implemented' | 'failed';
}

type LegEnd = Omit<RecordedLegEnd, 'record'>;

// The two ends a leg is recorded with, as JSON.stringify writes them: only a line holding one is
// parsed (a --send-logs journal is mostly log lines). Inside a string a quote is escaped, so a log
// that prints these words is not matched; it would only be parsed, and then found no event.
const ENDS = [Buffer.from('"disposition":"implemented"'), Buffer.from('"disposition":"failed"')];

// A journal's leg ends, kept while it is the same size: `auto` asks twice per invocation (recent
// failures, work already implemented), and a past run's journal no longer grows.
const known = new Map<string, { size: number; ends: LegEnd[] }>();

/** The implemented and failed legs of one journal, in order; read only, never restored for appending. */
function legEndsOf(path: string): LegEnd[] {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return [];
  }
  try {
    const size = fstatSync(fd).size;
    const hit = known.get(path);
    if (hit?.size === size) return hit.ends;
    const ends: LegEnd[] = [];
    // Events in the order of their local numbers, each once, as the journal's own reader gives them.
    let lastN = 0;
    scanLineBytes(fd, 0, (line) => {
      if (!ENDS.some((end) => line.includes(end))) return true;
      const r = parse(line.toString('utf8'));
      if (r?.t !== 'ev' || r.n <= lastN) return true;
      lastN = r.n;
      const d = r.ev.disposition;
      if (r.ev.workItemKey && (d === 'implemented' || d === 'failed')) ends.push({ key: r.ev.workItemKey, disposition: d });
      return true;
    });
    known.set(path, { size, ends });
    return ends;
  } finally {
    closeSync(fd);
  }
}

/** Every implemented or failed leg of local runs of `projectKey` opened since `sinceMs`, in journal order per run. */
export function* recordedLegEnds(stateDir: string, projectKey: string, sinceMs = 0): Generator<RecordedLegEnd> {
  for (const record of listRunHeads(stateDir)) {
    if (record.projectKey !== projectKey || Date.parse(record.openedAt) < sinceMs) continue;
    for (const end of legEndsOf(runPaths(stateDir, record.runId).journal)) yield { record, ...end };
  }
}

/** Keys whose latest recorded leg, in runs of `projectKey` opened since `sinceMs`, ended failed. */
export function recentFailures(stateDir: string, projectKey: string, sinceMs: number): Set<string> {
  const last = new Map<string, string>();
  for (const leg of recordedLegEnds(stateDir, projectKey, sinceMs)) last.set(leg.key, leg.disposition);
  return new Set([...last].filter(([, d]) => d === 'failed').map(([k]) => k));
}
