// A run that crashed mid-leg reports what its local state knows (the leg still running, the run
// with no close); once `svc runs recover` has closed it, the same leg is failed and the run has
// its close, and a report made any time after gives the same document.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { validateXML } from 'xmllint-wasm';
import { readFileSync } from 'node:fs';
import { Journal } from '../../../src/dispatch/wire/journal.js';
import { buildRunReport, renderReport } from '../../../src/dispatch/report/index.js';
import { createRunFolder, logPath } from '../../../src/dispatch/state/folder.js';

const XSD = readFileSync(join(import.meta.dirname, '../../fixtures/report/junit.xsd'), 'utf8');

describe('a crashed run, before and after recover', () => {
  test('running leg and run while no close is recorded; failed and closed after; the same report every time', async () => {
    const stateDir = join(mkdtempSync(join(tmpdir(), 'svc-report-crash-')), 'state');
    const paths = createRunFolder(stateDir, {
      runId: 'run_Crashed0001',
      baseUrl: 'http://127.0.0.1:1',
      projectKey: 'DEMO',
      command: 'run',
      originalCommand: 'run',
      scopeKey: null,
      baseSeq: 0,
      openedAt: '2026-01-05T03:00:00.000Z',
      cards: [{ workItemKey: 'DEMO-3' }, { workItemKey: 'DEMO-5' }],
      options: {},
    });
    const journal = Journal.open(paths.journal);
    journal.append({ workItemKey: 'DEMO-3', disposition: 'running', sessionBranch: 'svc/DEMO-3' }, new Date('2026-01-05T03:00:02.000Z'));
    writeFileSync(logPath(paths, 'DEMO-3'), 'half way through\n');

    const crashed = await buildRunReport(stateDir, 'run_Crashed0001', { secrets: [] });
    expect(crashed).toMatchObject({ status: 'running', stopReason: null, endedAt: '2026-01-05T03:00:02.000Z', totals: { running: 1, notReached: 1 } });
    expect(crashed.legs[0]).toMatchObject({ disposition: 'running', startedAt: '2026-01-05T03:00:02.000Z', endedAt: null, logTail: 'half way through' });
    const xml = renderReport('junit', [crashed]);
    expect(xml).toContain('<error message="leg running when the report was made" type="running"/>');
    expect((await validateXML({ xml: [{ fileName: 'r.xml', contents: xml }], schema: [{ fileName: 'junit.xsd', contents: XSD }] })).valid).toBe(true);

    // What recover writes once the service has the run closed.
    journal.markClosing('interrupted', 'cancelled');
    journal.markClosed('interrupted', 'cancelled');
    journal.close();
    const recovered = await buildRunReport(stateDir, 'run_Crashed0001', { secrets: [] });
    expect(recovered).toMatchObject({ status: 'cancelled', stopReason: 'interrupted', totals: { failed: 1, running: 0, notReached: 1 } });
    expect(recovered.legs[0]).toMatchObject({ disposition: 'failed', reason: 'the run closed while the leg ran' });
    const later = await buildRunReport(stateDir, 'run_Crashed0001', { secrets: [] });
    expect(renderReport('json', [later])).toBe(renderReport('json', [recovered]));
  });
});
