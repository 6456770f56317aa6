// Reports as a user gets them: `--report FORMAT:FILE` on a real run against the real local service,
// the markdown landing in GitHub's step summary and (through a stand-in buildkite-agent that
// records its argv and stdin) a Buildkite annotation, and `svc runs report` after the fact giving
// the very same report from the local state. Each svc runs in-process (the real command tree, the
// test's environment as its own); the agents and the buildkite-agent it starts are real processes.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { isolatedEnv, makeRepo, type CliEnv } from '../../support/cli.js';
import { startLocalServer, type LocalServer } from '../../support/server-process.js';
import { svcInProcess } from '../../support/svc-in-process.js';

const AGENT = `#!/bin/sh
echo "working on $SVC_CARD_KEY"
echo "leaked? $LEAK"
if [ "$SVC_CARD_KEY" = DEMO-5 ]; then echo "FAIL: 1 test failed" >&2; exit 3; fi
echo "x" > "$SVC_CARD_KEY.txt" && git add -A && git -c user.name=a -c user.email=a@example.invalid commit -qm "$SVC_CARD_KEY: done"
`;

const BUILDKITE_AGENT = `#!/bin/sh
printf '%s\\n' "$@" > "$RECORD/argv-$$"
cat > "$RECORD/stdin-$$"
`;

let server: LocalServer;
let root: string;
let env: CliEnv;
let agent: string;

beforeAll(async () => {
  server = await startLocalServer();
  root = mkdtempSync(join(tmpdir(), 'svc-report-cli-'));
  agent = join(root, 'agent.sh');
  writeFileSync(agent, AGENT, { mode: 0o755 });
  env = isolatedEnv({ SVC_BASE_URL: server.url, SVC_TOKEN: server.token, SVC_PROJECT: 'DEMO', SVC_HEARTBEAT_INTERVAL: '1s', LEAK: `token ${server.token}` });
  delete env.GITHUB_STEP_SUMMARY;
  delete env.BUILDKITE;
}, 60_000);

afterAll(async () => {
  const violations = await server?.stop();
  expect(violations ?? []).toEqual([]);
});

describe('--report on a dispatch command', () => {
  test('writes every format, the step summary and a Buildkite annotation; runs report repeats it later', async () => {
    const out = join(root, 'out');
    const record = join(root, 'bk');
    const bin = join(root, 'bin');
    mkdirSync(record);
    mkdirSync(bin);
    writeFileSync(join(bin, 'buildkite-agent'), BUILDKITE_AGENT, { mode: 0o755 });
    const summaryFile = join(root, 'step-summary.md');
    writeFileSync(summaryFile, '## earlier step\n');
    const ci = { ...env, GITHUB_STEP_SUMMARY: summaryFile, BUILDKITE: 'true', RECORD: record, PATH: `${bin}:${env.PATH}` };
    const repo = await makeRepo();
    const r = await svcInProcess(
      [
        'run',
        'DEMO-3',
        'DEMO-5',
        '--parallel',
        '2',
        '--on-failure',
        'continue',
        '--agent-cmd',
        `sh ${agent}`,
        '--agent-env',
        'LEAK',
        '--repo',
        repo,
        '--json',
        '--report',
        `junit:${out}/svc.xml`,
        '--report',
        `markdown:${out}/svc.md`,
        '--report',
        `html:${out}/svc.html`,
        '--report',
        `json:${out}/svc.json`,
      ],
      { env: ci },
    );
    expect(r.code, r.stderr).toBe(1);
    const { runId } = JSON.parse(r.stdout) as { runId: string };

    const doc = JSON.parse(readFileSync(join(out, 'svc.json'), 'utf8')) as {
      runs: { runId: string; status: string; legs: { key: string; disposition: string; commits: unknown[]; logTail: string }[] }[];
    };
    expect(doc.runs.map((x) => [x.runId, x.status])).toEqual([[runId, 'failed']]);
    expect(doc.runs[0]!.legs.map((l) => [l.key, l.disposition, l.commits.length])).toEqual([
      ['DEMO-3', 'implemented', 1],
      ['DEMO-5', 'failed', 0],
    ]);
    expect(doc.runs[0]!.legs[1]!.logTail).toContain('FAIL: 1 test failed');
    expect(readFileSync(join(out, 'svc.xml'), 'utf8')).toContain('<failure message="exit 3"');
    expect(readFileSync(join(out, 'svc.html'), 'utf8')).toContain('<h3>Timeline</h3>');
    const md = readFileSync(join(out, 'svc.md'), 'utf8');
    expect(md).toContain('| DEMO-5 Guest checkout tests | ❌ failed |');

    // GitHub: appended after what earlier steps wrote.
    expect(readFileSync(summaryFile, 'utf8')).toBe(`## earlier step\n${md}\n`);
    // Buildkite: one annotation for the run, styled by its status, its context the run id.
    const calls = (await import('node:fs')).readdirSync(record).filter((f) => f.startsWith('argv-'));
    expect(calls).toHaveLength(1);
    expect(readFileSync(join(record, calls[0]!), 'utf8').trim().split('\n')).toEqual(['annotate', '--style', 'error', '--context', `svc-${runId}`]);
    expect(readFileSync(join(record, calls[0]!.replace('argv-', 'stdin-')), 'utf8')).toBe(md);

    // After the fact, from the local state only (the service is not even asked: a dead address).
    const later = { ...env, SVC_BASE_URL: 'http://127.0.0.1:9' };
    const again = await svcInProcess(['runs', 'report', runId, '--format', 'junit'], { env: later });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toBe(readFileSync(join(out, 'svc.xml'), 'utf8'));
    const since = await svcInProcess(['runs', 'report', '--since', '1h', '--output', join(out, 'since.md')], { env: later });
    expect(since.code, since.stderr).toBe(0);
    expect(readFileSync(join(out, 'since.md'), 'utf8')).toBe(md);

    // Nothing of the token: not in the reports, nor what CI was handed.
    for (const f of ['svc.xml', 'svc.md', 'svc.html', 'svc.json']) expect(readFileSync(join(out, f), 'utf8'), f).not.toContain(server.token);
    expect(doc.runs[0]!.legs[0]!.logTail).toContain('leaked? token [REDACTED]');
  }, 120_000);

  test('a bad --report is a usage error before any run opens', async () => {
    const repo = await makeRepo();
    const fresh = { ...env, ...isolatedEnv({ SVC_BASE_URL: server.url, SVC_TOKEN: server.token, SVC_PROJECT: 'DEMO' }) };
    for (const spec of ['pdf:out.pdf', 'junit', 'junit:']) {
      const r = await svcInProcess(['run', 'DEMO-6', '--agent-cmd', `sh ${agent}`, '--repo', repo, '--report', spec], { env: fresh });
      expect(r.code, spec).toBe(2);
      expect(r.stderr.trim().split('\n'), spec).toHaveLength(1);
      expect(r.stderr, spec).toMatch(/^svc: --report/);
    }
    // A path svc cannot write is refused at once, before anything opens: under a file, or under
    // /proc, where Node's own recursive mkdir would spin forever, deaf to signals.
    const blocked = join(root, 'a-file');
    writeFileSync(blocked, '');
    for (const [file, why] of [
      [`${blocked}/svc.xml`, 'ENOTDIR: not a directory'],
      ['/proc/nope/x.xml', 'ENOENT: no such file or directory'],
    ]) {
      const r = await svcInProcess(['run', 'DEMO-6', '--agent-cmd', `sh ${agent}`, '--repo', repo, '--report', `junit:${file}`], { env: fresh });
      expect([r.code, r.stderr]).toEqual([2, `svc: cannot write the report ${file}: ${why}\n`]);
    }
    const hosted = await svcInProcess(['run', 'DEMO-6', '--hosted', '--report', 'junit:x.xml'], { env: fresh });
    expect([hosted.code, hosted.stderr.trim()]).toEqual([2, 'svc: --report needs a run executed here; a hosted run reports where it runs']);
    const stdout = await svcInProcess(['run', 'DEMO-6', '--agent-cmd', `sh ${agent}`, '--repo', repo, '--json', '--report', 'junit:-'], { env: fresh });
    expect(stdout.code).toBe(2);
    expect(stdout.stdout).toBe('');
    expect(existsSync(join(fresh.SVC_STATE_DIR!, 'runs'))).toBe(false);
    expect(existsSync(fresh.SVC_STATE_DIR!)).toBe(false);
  });

  test('a dry run still writes its (empty) reports; a report that cannot be written is a warning and exit 1, the run closed', async () => {
    const out = join(root, 'dry');
    const dry = await svcInProcess(
      ['run', 'DEMO-6', '--dry-run', '--repo', await makeRepo(), '--report', `junit:${out}/svc.xml`, '--report', `json:${out}/svc.json`],
      { env },
    );
    expect(dry.code, dry.stderr).toBe(0);
    expect(readFileSync(join(out, 'svc.xml'), 'utf8')).toContain('<testsuites name="svc" tests="0" failures="0" errors="0" time="0.000">');
    expect(JSON.parse(readFileSync(join(out, 'svc.json'), 'utf8'))).toEqual({ schema: 'svc.report/1', runs: [] });

    // SVC_CI_SUMMARY=0: no step summary even where GitHub asks for one.
    const summaryFile = join(root, 'untouched-summary.md');
    writeFileSync(summaryFile, '');
    const quiet = { ...env, GITHUB_STEP_SUMMARY: summaryFile, SVC_CI_SUMMARY: '0' };
    // A path that is writable when the run opens but not when it ends: the agent makes a folder there.
    const late = join(out, 'late.xml');
    const r = await svcInProcess(
      [
        'run',
        'DEMO-6',
        '--agent-cmd',
        `sh -c "mkdir ${late} && sh ${agent}"`,
        '--repo',
        await makeRepo(),
        '--json',
        '--report',
        `junit:${late}`,
        '--report',
        `markdown:${out}/ok.md`,
      ],
      { env: quiet },
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^svc: could not write the junit report .*late\.xml: EISDIR: illegal operation on a directory$/m);
    const summary = JSON.parse(r.stdout) as { runId: string; status: string };
    expect(summary.status).toBe('succeeded');
    expect(readFileSync(join(out, 'ok.md'), 'utf8')).toContain(summary.runId);
    expect(readFileSync(summaryFile, 'utf8')).toBe('');
    const again = await svcInProcess(['runs', 'report', summary.runId, '--format', 'junit'], { env });
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('failures="0"');
  }, 60_000);

  test("run_scope: the close-out is reported after the legs, on the scope's branch", async () => {
    const r = await svcInProcess(
      [
        'run_scope',
        'DEMO-2',
        '--agent-cmd',
        `sh ${agent}`,
        '--repo',
        await makeRepo(),
        '--on-failure',
        'continue',
        '--json',
        '--report',
        `json:${root}/scope.json`,
      ],
      { env },
    );
    const doc = JSON.parse(readFileSync(join(root, 'scope.json'), 'utf8')) as {
      runs: {
        scopeKey: string;
        legs: { key: string; disposition: string }[];
        closeOut: { key: string; disposition: string; branch: string; commits: unknown[] } | null;
      }[];
    };
    expect(r.stderr).toContain('close-out of DEMO-2');
    expect(doc.runs[0]!.scopeKey).toBe('DEMO-2');
    expect(doc.runs[0]!.legs.map((l) => [l.key, l.disposition])).toEqual([
      ['DEMO-3', 'implemented'],
      ['DEMO-4', 'implemented'],
      ['DEMO-5', 'failed'],
    ]);
    expect(doc.runs[0]!.closeOut).toMatchObject({ key: 'DEMO-2', disposition: 'implemented', branch: 'svc/DEMO-2' });
    expect(doc.runs[0]!.closeOut!.commits).toHaveLength(1);
  }, 120_000);

  test('auto: one report holds every run it opened, oldest first', async () => {
    // --rerun: the tests above implemented the demo's ready cards, which recorded themselves in_review.
    const r = await svcInProcess(
      [
        'auto',
        '--max',
        '2',
        '--rerun',
        '--agent-cmd',
        `sh ${agent}`,
        '--repo',
        await makeRepo(),
        '--on-failure',
        'continue',
        '--json',
        '--report',
        `json:${root}/auto.json`,
        '--report',
        `junit:${root}/auto.xml`,
      ],
      { env },
    );
    const summary = JSON.parse(r.stdout) as { runs: { runId: string | null }[] };
    const ids = summary.runs.map((x) => x.runId).filter(Boolean);
    expect(ids.length, r.stderr).toBeGreaterThanOrEqual(1);
    const doc = JSON.parse(readFileSync(join(root, 'auto.json'), 'utf8')) as { runs: { runId: string }[] };
    expect(doc.runs.map((x) => x.runId)).toEqual(ids);
    expect(readFileSync(join(root, 'auto.xml'), 'utf8').match(/<testsuite /g)).toHaveLength(ids.length);
  }, 120_000);

  test('runs report: what to report and in what format are checked; an unknown run is exit 4', async () => {
    const cases: [string[], number, RegExp][] = [
      [['runs', 'report', '--format', 'junit'], 2, /name the runs to report/],
      [['runs', 'report', 'run_X'], 2, /--format is required/],
      [['runs', 'report', 'run_X', '--format', 'yaml'], 2, /unknown format 'yaml'/],
      [['runs', 'report', 'run_X', '--since', 'soon', '--format', 'md'], 2, /invalid duration/],
      [['runs', 'report', 'run_Unknown', '--output', 'x.html'], 4, /no local state for run run_Unknown/],
      [['runs', 'report', '../etc', '--format', 'json'], 2, /not a run id/],
    ];
    for (const [args, code, message] of cases) {
      const r = await svcInProcess(args, { env, cwd: root });
      expect(r.code, args.join(' ')).toBe(code);
      expect(r.stderr, args.join(' ')).toMatch(message);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
    }
  });
});
