// What earlier local runs did to each card (src/dispatch/select/recent.ts), read from journals the
// real Journal wrote: only the lines that end a leg count, a log that prints the same words is not
// one, a torn last line is skipped, and a journal that grew is read again.
import { appendFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { recentFailures, recordedLegEnds } from '../../../src/dispatch/select/recent.js';
import { createRunFolder, type RunRecord } from '../../../src/dispatch/state/folder.js';
import { Journal } from '../../../src/dispatch/wire/journal.js';

function run(stateDir: string, runId: string, projectKey: string, openedAt: string): Journal {
  const record = {
    runId,
    projectKey,
    openedAt,
    baseUrl: 'http://127.0.0.1:1',
    command: 'batch',
    originalCommand: 'batch',
    scopeKey: null,
    baseSeq: 0,
    cards: [],
    options: {},
  };
  const paths = createRunFolder(stateDir, record as RunRecord);
  return Journal.open(paths.journal);
}

test('the leg ends of each run of the project, in order; not a log line that prints the words, not a torn line', () => {
  const stateDir = mkdtempSync(join(tmpdir(), 'svc-recent-'));
  const first = run(stateDir, 'run_a', 'PROJ', '2026-12-01T10:00:00.000Z');
  first.append({ workItemKey: 'PROJ-1', disposition: 'running' });
  first.append({ workItemKey: 'PROJ-1', body: 'echo {"disposition":"implemented"} and "disposition":"failed"\n' });
  first.append({ workItemKey: 'PROJ-1', disposition: 'implemented', exitCode: 0 });
  first.append({ workItemKey: 'PROJ-2', disposition: 'failed', exitCode: 1 });
  first.close();
  const other = run(stateDir, 'run_b', 'OTHER', '2026-12-01T11:00:00.000Z');
  other.append({ workItemKey: 'OTHER-1', disposition: 'failed' });
  other.close();
  const second = run(stateDir, 'run_c', 'PROJ', '2026-12-01T12:00:00.000Z');
  second.append({ workItemKey: 'PROJ-2', disposition: 'implemented' });
  second.close();
  // A crash mid-write: the last line is cut short.
  appendFileSync(
    join(stateDir, 'runs', 'run_c', 'journal.jsonl'),
    '{"t":"ev","n":2,"at":"2026-12-01T12:00:01.000Z","ev":{"workItemKey":"PROJ-3","disposition":"fail',
  );

  const ends = [...recordedLegEnds(stateDir, 'PROJ')].map((e) => [e.record.runId, e.key, e.disposition]);
  expect(ends).toEqual([
    ['run_a', 'PROJ-1', 'implemented'],
    ['run_a', 'PROJ-2', 'failed'],
    ['run_c', 'PROJ-2', 'implemented'],
  ]);
  // The latest leg of PROJ-2 was implemented: no recent failure; from 11:30 on, run_a is not counted.
  expect(recentFailures(stateDir, 'PROJ', 0)).toEqual(new Set());
  expect([...recordedLegEnds(stateDir, 'PROJ', Date.parse('2026-12-01T11:30:00.000Z'))].map((e) => e.key)).toEqual(['PROJ-2']);

  // A journal that grew since it was read is read again.
  const again = Journal.open(join(stateDir, 'runs', 'run_a', 'journal.jsonl'));
  again.append({ workItemKey: 'PROJ-4', disposition: 'failed' });
  again.close();
  expect([...recordedLegEnds(stateDir, 'PROJ')].map((e) => e.key)).toEqual(['PROJ-1', 'PROJ-2', 'PROJ-4', 'PROJ-2']);
  expect(recentFailures(stateDir, 'PROJ', 0)).toEqual(new Set(['PROJ-4']));
});
