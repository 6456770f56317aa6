// The run summary names each leg's pull request (or the hint when none could be written).
import { describe, expect, it } from 'vitest';
import { testOutput } from '../support/output.js';
import { printRunSummary } from '../../src/ui/run-progress.js';
import type { RunSummary } from '../../src/dispatch/lifecycle/types.js';
import type { LegSummary } from '../../src/dispatch/ports.js';

function capture() {
  let text = '';
  const stream = { write: (s: string) => ((text += s), true), isTTY: false } as unknown as NodeJS.WriteStream;
  return { stream, text: () => text };
}

const leg = (key: string, pullRequest: LegSummary['pullRequest']): LegSummary => ({
  key,
  title: 't',
  disposition: 'implemented',
  durationMs: 1000,
  exitCode: 0,
  reason: null,
  costUsd: null,
  tokens: { in: null, out: null },
  sessionBranch: `svc/${key}`,
  pullRequest,
});

describe('printRunSummary with --pr', () => {
  it('prints the URL of each pull request and the hint of a leg that got none', () => {
    const err = capture();
    const out = capture();
    const summary: RunSummary = {
      runId: 'run_1',
      command: 'batch',
      scopeKey: null,
      stopReason: 'drained',
      status: 'succeeded',
      cards: [],
      exitCode: 0,
      note: '',
      dryRun: false,
      legs: [
        leg('P-1', { action: 'opened', url: 'https://github.com/a/b/pull/1', number: 1 }),
        leg('P-2', {
          action: 'hint',
          url: 'https://github.com/a/b/compare/svc/P-2?expand=1',
          number: null,
          hint: 'P-2: gh is not installed; open the pull request at https://github.com/a/b/compare/svc/P-2?expand=1',
        }),
        leg('P-3', null),
      ],
    };
    printRunSummary(testOutput({ stdout: out.stream, stderr: err.stream, env: {} }), summary);
    const lines = err.text().split('\n');
    expect(lines).toContain('P-1: pull request opened: https://github.com/a/b/pull/1');
    expect(lines).toContain('P-2: gh is not installed; open the pull request at https://github.com/a/b/compare/svc/P-2?expand=1');
    expect(err.text()).not.toMatch(/P-3: pull request/);
  });
});
