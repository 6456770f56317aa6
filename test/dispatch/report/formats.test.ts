// The four formats of one run's local state: JUnit validated against the schema Jenkins and GitLab
// read and parsed by a JUnit parser, markdown compared with its fixture, json as documented, and
// the same report on every build (no clock, no service).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'junit2json';
import { beforeAll, describe, expect, test } from 'vitest';
import { validateXML } from 'xmllint-wasm';
import { buildRunReport, renderReport, type RunReport } from '../../../src/dispatch/report/index.js';
import { makeFixture, PLANTED_CUSTOM, PLANTED_SECRET, RUN_ID, type Fixture } from './fixture.js';

const XSD = readFileSync(join(import.meta.dirname, '../../fixtures/report/junit.xsd'), 'utf8');
const MD_FIXTURE = join(import.meta.dirname, '../../fixtures/report/report.md');

let fx: Fixture;
let report: RunReport;

beforeAll(async () => {
  fx = await makeFixture();
  report = await buildRunReport(fx.stateDir, fx.runId, { secrets: [PLANTED_CUSTOM] });
});

async function validate(xml: string) {
  return validateXML({ xml: [{ fileName: 'report.xml', contents: xml }], schema: [{ fileName: 'junit.xsd', contents: XSD }] });
}

describe('the report model', () => {
  test('cards in the order opened, with times, spend and git from the local state', () => {
    expect(report).toMatchObject({
      runId: RUN_ID,
      command: 'batch',
      status: 'failed',
      stopReason: 'halted',
      agent: 'claude',
      model: 'sonnet',
      durationMs: 270_000,
    });
    expect(report.legs.map((l) => [l.key, l.disposition])).toEqual([
      ['DEMO-3', 'implemented'],
      ['DEMO-5', 'failed'],
      ['DEMO-6', 'implemented'],
      ['DEMO-7', 'skipped'],
      ['DEMO-8', 'not_reached'],
    ]);
    expect(report.totals).toEqual({
      cards: 5,
      implemented: 2,
      failed: 1,
      skipped: 1,
      notReached: 1,
      running: 0,
      costUsd: 0.437,
      tokens: { in: 191_514, out: 13_784 },
    });
    const d3 = report.legs[0]!;
    expect(d3.commits.map((c) => c.subject)).toEqual(['DEMO-3: tests for the endpoint', 'DEMO-3: guest checkout endpoint']);
    expect(d3.diffStat).toMatch(/src\/api\/guest\.ts +\| 12 \+{12}\n test\/guest\.test\.ts \|  5 \+{5}\n 2 files changed, 17 insertions\(\+\)/);
    expect(d3.logTail).toBe('reading the card\nadding POST /checkout/guest\n✓ 14 tests passed\ncommitted 2 changes');
    expect(report.legs[3]).toMatchObject({ skipReason: 'implemented by an earlier run: svc/DEMO-7 holds the work', startedAt: null, logTail: null });
  });

  test('the log tail is its last 40 lines and commit messages are redacted like the logs (shapes and the secrets in play)', () => {
    const tail = report.legs[1]!.logTail!;
    expect(tail.split('\n')).toHaveLength(40);
    expect(tail).toContain('Tests: 1 failed, 119 passed, 120 total');
    expect(tail).toContain('using [REDACTED] to call the API');
    expect(tail).toContain('the run token is [REDACTED]');
    expect(tail).not.toContain(PLANTED_SECRET);
    expect(tail).not.toContain(PLANTED_CUSTOM);
    // Commit messages are the agent's output too.
    expect(report.legs[2]!.commits.map((c) => c.subject)).toEqual(['DEMO-6: upgrade undici (tested with [REDACTED])']);
  });

  test('the same state reports the same, byte for byte, in every format', async () => {
    const again = await buildRunReport(fx.stateDir, fx.runId, { secrets: [PLANTED_CUSTOM] });
    for (const f of ['junit', 'markdown', 'html', 'json'] as const) expect(renderReport(f, [again])).toBe(renderReport(f, [report]));
  });

  test('no token in any format', () => {
    for (const f of ['junit', 'markdown', 'html', 'json'] as const) {
      const text = renderReport(f, [report]);
      expect(text, f).not.toContain(PLANTED_SECRET);
      expect(text, f).not.toContain(PLANTED_CUSTOM);
      expect(text, f).toContain('[REDACTED]');
    }
  });

  test('a run with no local state is not found (exit 4); an id that leaves the folder is a usage error', async () => {
    await expect(buildRunReport(fx.stateDir, 'run_Nope', { secrets: [] })).rejects.toMatchObject({ exitCode: 4 });
    await expect(buildRunReport(fx.stateDir, '../..', { secrets: [] })).rejects.toMatchObject({ exitCode: 2 });
  });
});

describe('junit', () => {
  test('validates against the JUnit schema and parses as one suite of five cases', async () => {
    const xml = renderReport('junit', [report]);
    const result = await validate(xml);
    expect(result.errors).toEqual([]);
    expect(result.valid).toBe(true);
    const parsed = (await parse(xml)) as {
      testsuite: {
        name: string;
        tests: number;
        failures: number;
        skipped: number;
        errors: number;
        properties: { name: string; value: string }[];
        testcase: { name: string; time: number; failure?: { message: string; inner: string }[]; skipped?: { message: string }[] }[];
      }[];
    };
    expect(parsed.testsuite).toHaveLength(1);
    const suite = parsed.testsuite[0]!;
    expect(suite).toMatchObject({ name: `svc batch (${RUN_ID})`, tests: 5, failures: 1, skipped: 2, errors: 0 });
    const props = Object.fromEntries(suite.properties.map((p) => [p.name, p.value]));
    expect(props).toMatchObject({ stopReason: 'halted', status: 'failed', costUsd: 0.437, tokensIn: 191514 });
    expect(suite.testcase.map((c) => c.name)).toEqual([
      'DEMO-3 Guest checkout API',
      'DEMO-5 Guest checkout tests',
      'DEMO-6 Upgrade the HTTP client',
      'DEMO-7',
      'DEMO-8',
    ]);
    const failed = suite.testcase[1]!;
    expect(failed.time).toBe(117.5);
    expect(failed.failure![0]!.message).toBe('exit 1');
    expect(failed.failure![0]!.inner).toContain('expected 422, got 500');
    expect(suite.testcase[3]!.skipped![0]!.message).toBe('implemented by an earlier run: svc/DEMO-7 holds the work');
    expect(suite.testcase[4]!.skipped![0]!.message).toBe('not reached (the run stopped halted)');
  });

  test('the schema check can fail: a case without a classname, or two verdicts, is refused', async () => {
    const xml = renderReport('junit', [report]);
    expect((await validate(xml.replace(/ classname="[^"]*"/, ''))).valid).toBe(false);
    expect((await validate(xml.replace('<skipped ', '<failure message="x"/><skipped '))).valid).toBe(false);
  });

  test('no runs: an empty, valid document (a CI step that ran nothing still uploads a file)', async () => {
    const xml = renderReport('junit', []);
    expect((await validate(xml)).valid).toBe(true);
  });

  test('control characters and markup in a log stay inside the failure, as text', async () => {
    const odd = {
      ...report,
      legs: report.legs.map((l) => (l.key === 'DEMO-5' ? { ...l, reason: 'agent said <b>"no"</b> & \x07left', logTail: ']]> </failure>\x00' } : l)),
    };
    const xml = renderReport('junit', [odd]);
    expect((await validate(xml)).valid).toBe(true);
    const parsed = (await parse(xml)) as { testsuite: { testcase: { failure?: { message: string; inner: string }[] }[] }[] };
    expect(parsed.testsuite[0]!.testcase[1]!.failure![0]!.message).toBe('agent said <b>"no"</b> & left');
    expect(parsed.testsuite[0]!.testcase[1]!.failure![0]!.inner).toContain(']]> </failure>');
  });
});

describe('markdown', () => {
  test('matches the fixture (a GitHub table and a section per failed card)', () => {
    const md = renderReport('markdown', [report]);
    if (process.env.SVC_UPDATE_FIXTURES) writeFileSync(MD_FIXTURE, md);
    expect(md).toBe(readFileSync(MD_FIXTURE, 'utf8'));
  });

  test('every table row has as many cells as the header; a pipe in a reason cannot add one', () => {
    const odd = { ...report, legs: report.legs.map((l) => (l.key === 'DEMO-5' ? { ...l, reason: 'a | b | c' } : l)) };
    const rows = renderReport('markdown', [odd])
      .split('\n')
      .filter((l) => l.startsWith('|'));
    const cells = (row: string) => row.replace(/\\\|/g, '').split('|').length;
    expect(rows.length).toBe(7);
    for (const row of rows) expect(cells(row), row).toBe(cells(rows[0]!));
  });

  test('a log holding a code fence cannot close the block it is shown in', () => {
    const odd = { ...report, legs: report.legs.map((l) => (l.key === 'DEMO-5' ? { ...l, logTail: 'before\n```\n# heading?\n````' } : l)) };
    const md = renderReport('markdown', [odd]);
    expect(md).toContain('`````text\nbefore\n```\n# heading?\n````\n`````');
  });
});

describe('json', () => {
  test('one document: the schema name and the runs, as docs/json.md describes', () => {
    const doc = JSON.parse(renderReport('json', [report])) as { schema: string; runs: RunReport[] };
    expect(doc.schema).toBe('svc.report/1');
    expect(Object.keys(doc.runs[0]!).sort()).toEqual(
      [
        'agent',
        'closeOut',
        'command',
        'durationMs',
        'endedAt',
        'legs',
        'model',
        'originalCommand',
        'projectKey',
        'runId',
        'scopeKey',
        'startedAt',
        'status',
        'stopReason',
        'totals',
      ].sort(),
    );
    expect(Object.keys(doc.runs[0]!.legs[0]!).sort()).toEqual(
      [
        'attempts',
        'base',
        'branch',
        'check',
        'commits',
        'costUsd',
        'diffStat',
        'disposition',
        'durationMs',
        'endedAt',
        'exitCode',
        'head',
        'key',
        'logTail',
        'network',
        'reason',
        'skipReason',
        'startedAt',
        'title',
        'tokens',
      ].sort(),
    );
  });
});

describe('the scope a run shows', () => {
  test('a run of named keys (svc run A B) shows its cards, a batch none', () => {
    const named = { ...report, command: 'run', originalCommand: 'run' };
    const keys = report.legs.map((l) => l.key).join(', ');
    expect(renderReport('html', [named])).toContain(`<dt>Scope</dt><dd>${keys}</dd>`);
    expect(renderReport('html', [report])).toContain('<dt>Scope</dt><dd><span class="muted">none</span></dd>');
  });
});
