// As a new user meets svc: `svc run KEY` with no project configured, the
// project taken from the keys, and the checks that refuse a doomed run before anything is opened.
// The command line, run in-process, against the real local service; every request the service
// answered is recorded, so "nothing was sent" and "no run was opened" are asserted on the wire.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import type { DispatchRun } from '../../../src/contract/types.js';
import { isolatedEnv, makeRepo, run, type CliEnv } from '../../support/cli.js';
import { svcInProcess } from '../../support/svc-in-process.js';
import { startTestService, type TestService } from '../../support/service.js';

const COMMIT = 'sh -c "echo done > $SVC_CARD_KEY.txt && git add -A && git -c user.name=a -c user.email=a@example.invalid commit -qm \\"$SVC_CARD_KEY: done\\""';

let svc: TestService;
let repo: string;
const seen: string[] = [];
let a: string;
let b: string;
let other: string;

beforeAll(async () => {
  svc = await startTestService({ onResponse: (info) => seen.push(`${info.operationId ?? 'other'} ${info.status}`) });
  svc.admin.createProject({ workspaceId: svc.workspaceId, key: 'OTHER', name: 'Other project' });
  const item = (projectKey: string, title: string) => svc.admin.createWorkItem({ projectKey, kind: 'task', title, type: 'code' }).key;
  a = item('PROJ', 'first');
  b = item('PROJ', 'second');
  other = item('OTHER', 'elsewhere');
  repo = await makeRepo();
});

afterAll(async () => {
  await svc.close();
});

/** No project anywhere: no SVC_PROJECT, nothing stored. */
function env(extra: CliEnv = {}): CliEnv {
  return isolatedEnv({ SVC_BASE_URL: svc.url, SVC_TOKEN: svc.token, SVC_HEARTBEAT_INTERVAL: '1s', ...extra });
}

async function cli(args: string[], extra: CliEnv = {}) {
  seen.length = 0;
  const r = await svcInProcess(args, { env: env(extra) });
  expect(r.stderr).not.toContain(svc.token);
  return { ...r, requests: [...seen] };
}

const readRun = async (id: string) => (await svc.call('GET', `/dispatch-runs/${id}`)).body as DispatchRun;

describe('svc run KEY takes the project from its key', () => {
  test('with no project configured, svc run KEY runs end to end', async () => {
    const r = await cli(['run', a, '--agent-cmd', COMMIT, '--repo', repo, '--json']);
    expect(r.code, r.stderr).toBe(0);
    const summary = JSON.parse(r.stdout) as { runId: string };
    const record = await readRun(summary.runId);
    expect(record).toMatchObject({ command: 'run', status: 'succeeded', stopReason: 'completed' });
    expect(record.cards).toEqual([expect.objectContaining({ workItemKey: a, disposition: 'implemented' })]);
    expect(await run('git', ['log', '--format=%s', `svc/${a}`, '-1'], repo)).toBe(`${a}: done\n`);
  });

  test('SVC_PROJECT naming another project is a default for keyless commands only: it neither overrides nor breaks a key', async () => {
    const r = await cli(['run', other, '--dry-run', '--repo', repo, '--json'], { SVC_PROJECT: 'PROJ' });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).cards.map((c: { key: string }) => c.key)).toEqual([other]);
    expect(r.requests).toContain('getProject 200');
  });

  test('a --project that agrees with the keys is fine; run_scope, fix and review take it from the key too', async () => {
    for (const cmd of ['run', 'run_scope', 'fix', 'review']) {
      const r = await cli([cmd, a, '--dry-run', '--repo', repo, '--json', ...(cmd === 'run' ? ['-p', 'PROJ'] : [])]);
      expect(r.code, `${cmd}: ${r.stderr}`).toBe(0);
    }
  });

  test.each([
    ['keys of two projects', ['run', 'A-1', 'OTHER-1'], /2 projects \(A, OTHER\)/],
    ['keys of two projects (fix)', ['fix', 'PROJ-1', 'OTHER-1'], /2 projects/],
    ['keys of two projects (review)', ['review', 'PROJ-1', 'OTHER-1'], /2 projects/],
    ['a --project that disagrees', ['run', 'PROJ-1', '-p', 'OTHER'], /--project OTHER disagrees with the keys, which are of project PROJ/],
    ['a --project that disagrees, in a dry run', ['run', 'PROJ-1', '-p', 'OTHER', '--dry-run'], /--project OTHER disagrees/],
    ['a --project that disagrees (run_scope)', ['run_scope', 'PROJ-1', '--project', 'OTHER', '--dry-run'], /disagrees/],
    ['not a key', ['run', 'proj-1'], /not a work item key: proj-1/],
    ['no project for a keyless command', ['batch', '--dry-run'], /no project/],
  ])('%s: one usage line, exit 2, nothing sent', async (_name, args, message) => {
    const r = await cli([...args, '--agent-cmd', 'true', '--repo', repo]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^svc: /);
    expect(r.requests).toEqual([]);
  });

  test('continue RUN takes the project from the run; a --project that disagrees is refused before the run is continued', async () => {
    const failed = await cli(['run', b, '--agent-cmd', 'sh -c "exit 3"', '--repo', repo, '--json']);
    expect(failed.code).toBe(1);
    const { runId } = JSON.parse(failed.stdout) as { runId: string };

    const wrong = await cli(['continue', runId, '-p', 'OTHER', '--agent-cmd', COMMIT, '--repo', repo]);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/--project OTHER disagrees with run .*project PROJ/);
    expect(wrong.requests).toEqual(['getDispatchRun 200']);

    const again = await cli(['continue', runId, '--agent-cmd', COMMIT, '--repo', repo, '--json']);
    expect(again.code, again.stderr).toBe(0);
    const summary = JSON.parse(again.stdout) as { runId: string };
    expect(await readRun(summary.runId)).toMatchObject({ command: 'continue', status: 'succeeded' });
  });
});

/** A repository made by `git init` alone: HEAD names a branch with no commit. */
function unbornRepo(): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-unborn-'));
  execFileSync('git', ['init', '-q', dir]);
  return dir;
}

describe('checks before a run is opened', () => {
  test.each([
    [
      '--repo is not a git repository',
      () => ['--repo', mkdtempSync(join(tmpdir(), 'svc-notgit-')), '--agent-cmd', 'true'],
      2,
      /--repo \S+ is not a git repository/,
    ],
    [
      '--repo has no commit yet',
      () => ['--repo', unbornRepo(), '--agent-cmd', 'true'],
      2,
      /--repo \S+ has no commit yet: agents branch from HEAD, so commit something first/,
    ],
    ['--repo does not exist', () => ['--repo', '/nonexistent/svc-repo', '--agent-cmd', 'true'], 2, /--repo \/nonexistent\/svc-repo is not a directory/],
    ['the preset agent is not on PATH', () => ['--repo', repo, '--agent', 'claude'], 2, /--agent claude: claude is not on PATH: install Claude Code/],
    [
      'the --agent-cmd program is not on PATH',
      () => ['--repo', repo, '--agent-cmd', 'no-such-agent-xyz --go'],
      2,
      /--agent-cmd: no-such-agent-xyz is not on PATH/,
    ],
    [
      'the --agent-cmd path does not exist',
      () => ['--repo', repo, '--agent-cmd', './missing.sh {prompt_file}'],
      2,
      /\.\/missing\.sh is not an executable file \(looked in /,
    ],
  ])('%s: one line, exit $2, nothing sent', async (_name, extra, code, message) => {
    for (const dry of [[], ['--dry-run']]) {
      const r = await cli(['run', a, ...(extra as () => string[])(), ...dry], { PATH: '/usr/bin:/bin' });
      expect(r.code, r.stderr).toBe(code);
      expect(r.stderr).toMatch(message);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.requests).toEqual([]);
    }
  });

  test('git is not on PATH: one line, exit 2, nothing sent (not "is not a git repository")', async () => {
    const noGit = mkdtempSync(join(tmpdir(), 'svc-nogit-path-'));
    // svc's git runs with the process's PATH.
    vi.stubEnv('PATH', noGit);
    const r = await cli(['run', a, '--repo', repo, '--agent-cmd', '/bin/true'], { PATH: noGit });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toBe('svc: git was not found on PATH: svc runs agents in git worktrees, so it needs git installed\n');
    expect(r.requests).toEqual([]);
  });

  test('svc demo without git on PATH: the same one line, exit 2', async () => {
    const noGit = mkdtempSync(join(tmpdir(), 'svc-nogit-path-'));
    vi.stubEnv('PATH', noGit);
    const r = await svcInProcess(['demo'], { env: { PATH: noGit } });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toBe('svc: git was not found on PATH: svc runs agents in git worktrees, so it needs git installed\n');
  });

  test('a project that does not exist: exit 4, one line, no run opened (batch and a key alike)', async () => {
    for (const args of [
      ['batch', '-p', 'NOPE'],
      ['run', 'NOPE-1'],
    ]) {
      const r = await cli([...args, '--agent-cmd', 'true', '--repo', repo]);
      expect(r.code, r.stderr).toBe(4);
      expect(r.stderr.trim()).toBe('svc: project NOPE not found on the service (`svc projects` lists the ones this token sees)');
      expect(r.requests).toEqual(['getProject 404']);
    }
  });

  test('an executable agent script named by a path relative to the repository passes', async () => {
    const dir = await makeRepo();
    writeFileSync(join(dir, 'agent.sh'), '#!/bin/sh\nexit 0\n');
    chmodSync(join(dir, 'agent.sh'), 0o755);
    const r = await cli(['run', a, '--agent-cmd', './agent.sh {prompt_file}', '--repo', dir, '--dry-run', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.requests.some((q) => q.startsWith('openDispatchRun'))).toBe(false);
  });
});

describe("a typo keeps commander's suggestion, on the one error line", () => {
  test.each([
    [['rnu', 'PROJ-1'], "svc: unknown command 'rnu' (Did you mean run?) (see --help)"],
    [['run', 'PROJ-1', '--agnet', 'claude'], "svc: unknown option '--agnet' (Did you mean --agent?) (see --help)"],
  ])('svc %s', async (args, line) => {
    const r = await cli(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`${line}\n`);
    expect(r.requests).toEqual([]);
  });
});
