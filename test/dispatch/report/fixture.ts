// A run's local state as the engine leaves it, built with the engine's own writers (run folder,
// journal, legs.jsonl) and a real git repository whose commits have fixed dates, so every report
// of it is byte-for-byte the same on any machine and day: three legs at once (parallel 3), one
// failing and halting the run, one card skipped, one not reached, and a run_scope close-out absent.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Journal } from '../../../src/dispatch/wire/journal.js';
import { recordLeg, type LegRecord } from '../../../src/dispatch/report/record.js';
import { createRunFolder, logPath } from '../../../src/dispatch/state/folder.js';
import { run } from '../../support/cli.js';

export const RUN_ID = 'run_FixtureNight0001';
/** Planted in a log: the report must redact it like the logs are redacted. */
export const PLANTED_SECRET = `svc_pat_${'Q'.repeat(32)}`;
export const PLANTED_CUSTOM = 'hunter2-the-run-token-value';

const at = (hms: string) => `2026-01-05T${hms}.000Z`;

async function git(repo: string, args: string[], date = '2026-01-05T02:00:00Z'): Promise<string> {
  const env = { GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date };
  return new Promise((ok, fail) => {
    import('node:child_process').then(({ execFile }) =>
      execFile(
        'git',
        ['-c', 'user.name=agent', '-c', 'user.email=agent@example.invalid', ...args],
        { cwd: repo, env: { ...process.env, ...env } },
        (e, out, err) => (e ? fail(new Error(err || e.message)) : ok(out.trim())),
      ),
    );
  });
}

async function commitFile(repo: string, file: string, text: string, message: string, date: string): Promise<string> {
  mkdirSync(join(repo, file, '..'), { recursive: true });
  writeFileSync(join(repo, file), text);
  await git(repo, ['add', '-A'], date);
  await git(repo, ['commit', '-qm', message], date);
  return git(repo, ['rev-parse', 'HEAD'], date);
}

export interface Fixture {
  stateDir: string;
  repo: string;
  runId: string;
}

export async function makeFixture(): Promise<Fixture> {
  const root = mkdtempSync(join(tmpdir(), 'svc-report-'));
  const stateDir = join(root, 'state');
  const repo = join(root, 'repo');
  mkdirSync(repo);
  await run('git', ['init', '-q', '-b', 'main'], repo);
  const base = await commitFile(repo, 'README.md', '# shop\n', 'init', '2026-01-04T12:00:00Z');
  await git(repo, ['checkout', '-qb', 'svc/DEMO-3']);
  await commitFile(repo, 'src/api/guest.ts', 'export const guest = true;\n'.repeat(12), 'DEMO-3: guest checkout endpoint', '2026-01-05T02:01:10Z');
  const head3 = await commitFile(repo, 'test/guest.test.ts', 'test("guest");\n'.repeat(5), 'DEMO-3: tests for the endpoint', '2026-01-05T02:02:40Z');
  await git(repo, ['checkout', '-q', 'main']);
  await git(repo, ['checkout', '-qb', 'svc/DEMO-6']);
  const head6 = await commitFile(
    repo,
    'package.json',
    '{"dependencies":{"undici":"^8"}}\n',
    `DEMO-6: upgrade undici (tested with ${PLANTED_SECRET})`,
    '2026-01-05T02:04:00Z',
  );
  await git(repo, ['checkout', '-q', 'main']);

  const paths = createRunFolder(stateDir, {
    runId: RUN_ID,
    baseUrl: 'http://127.0.0.1:1',
    projectKey: 'DEMO',
    command: 'batch',
    originalCommand: 'batch',
    scopeKey: null,
    baseSeq: 0,
    openedAt: at('02:00:00'),
    cards: [
      { workItemKey: 'DEMO-3' },
      { workItemKey: 'DEMO-5' },
      { workItemKey: 'DEMO-6' },
      { workItemKey: 'DEMO-7', skipReason: 'implemented by an earlier run: svc/DEMO-7 holds the work' },
      { workItemKey: 'DEMO-8' },
    ],
    options: { parallel: 3 },
    run: {
      id: RUN_ID,
      projectId: 'p1',
      command: 'batch',
      origin: 'local',
      scopeWorkItemId: null,
      scopeLabel: null,
      status: 'running',
      stopReason: null,
      agent: 'claude',
      model: 'sonnet',
      startedAt: at('02:00:00'),
      endedAt: null,
      lastHeartbeatAt: null,
      createdById: null,
      agentInstance: null,
      seq: 0,
      cards: [],
    },
  });
  const journal = Journal.open(paths.journal);
  const ev = (hms: string, e: Parameters<Journal['append']>[0]) => journal.append(e, new Date(at(hms)));
  ev('02:00:01', { workItemKey: 'DEMO-3', disposition: 'running', sessionBranch: 'svc/DEMO-3' });
  ev('02:00:02', { workItemKey: 'DEMO-5', disposition: 'running', sessionBranch: 'svc/DEMO-5' });
  ev('02:00:40', { workItemKey: 'DEMO-6', disposition: 'running', sessionBranch: 'svc/DEMO-6' });
  ev('02:02:00', { workItemKey: 'DEMO-5', disposition: 'failed', sessionBranch: 'svc/DEMO-5', exitCode: 1 });
  ev('02:03:00', { workItemKey: 'DEMO-3', disposition: 'implemented', sessionBranch: 'svc/DEMO-3', exitCode: 0 });
  ev('02:04:30', { workItemKey: 'DEMO-6', disposition: 'implemented', sessionBranch: 'svc/DEMO-6', exitCode: 0 });
  journal.ack(journal.lastN, journal.lastN);
  journal.markClosing('halted', 'failed');
  journal.markClosed('halted', 'failed');
  journal.close();

  const leg = (r: Omit<LegRecord, 'repo'>): LegRecord => ({ ...r, repo });
  recordLeg(
    paths,
    leg({
      key: 'DEMO-5',
      title: 'Guest checkout tests',
      disposition: 'failed',
      durationMs: 117_500,
      exitCode: 1,
      reason: 'exit 1',
      costUsd: 0.0831,
      tokens: { in: 41_200, out: 3_150 },
      sessionBranch: 'svc/DEMO-5',
      startedAt: at('02:00:02'),
      endedAt: at('02:02:00'),
      base,
      head: base,
    }),
  );
  recordLeg(
    paths,
    leg({
      key: 'DEMO-3',
      title: 'Guest checkout API',
      disposition: 'implemented',
      durationMs: 178_200,
      exitCode: 0,
      reason: null,
      costUsd: 0.2417,
      tokens: { in: 98_004, out: 7_730 },
      sessionBranch: 'svc/DEMO-3',
      startedAt: at('02:00:01'),
      endedAt: at('02:03:00'),
      base,
      head: head3,
    }),
  );
  recordLeg(
    paths,
    leg({
      key: 'DEMO-6',
      title: 'Upgrade the HTTP client',
      disposition: 'implemented',
      durationMs: 229_000,
      exitCode: 0,
      reason: null,
      costUsd: 0.1122,
      tokens: { in: 52_310, out: 2_904 },
      sessionBranch: 'svc/DEMO-6',
      startedAt: at('02:00:40'),
      endedAt: at('02:04:30'),
      base,
      head: head6,
    }),
  );

  writeFileSync(logPath(paths, 'DEMO-3'), 'reading the card\nadding POST /checkout/guest\n\x1b[32m✓ 14 tests passed\x1b[0m\ncommitted 2 changes\n');
  writeFileSync(
    logPath(paths, 'DEMO-5'),
    [
      ...Array.from({ length: 50 }, (_, i) => `step ${i + 1}: running the suite`),
      `using ${PLANTED_SECRET} to call the API`,
      `the run token is ${PLANTED_CUSTOM}`,
      'FAIL test/guest.test.ts > rejects an empty cart',
      '  expected 422, got 500',
      'Tests: 1 failed, 119 passed, 120 total',
    ].join('\n') + '\n',
  );
  writeFileSync(logPath(paths, 'DEMO-6'), 'bumping undici to ^8\nnpm test: ok\n');
  return { stateDir, repo, runId: RUN_ID };
}
