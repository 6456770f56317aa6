// The walking skeleton, as a user runs it: `svc server` in one process, `svc run KEY` in another,
// a fake agent in a worktree; the run record on the service tells what happened. The runs spawn
// the real bin/svc.js (side by side: each has its own cards and repository); the checks of bad
// input and of --dry-run run the same command tree in-process (test/support/program.ts), against
// the same server.
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { DispatchRun } from '../../src/contract/types.js';
import { isolatedEnv, makeRepo, run, runCli, type CliEnv } from '../support/cli.js';
import { runProgram } from '../support/program.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';

const COMMIT = 'sh -c "echo done > $SVC_CARD_KEY.txt && git add -A && git -c user.name=a -c user.email=a@example.invalid commit -qm \\"$SVC_CARD_KEY: done\\""';

let server: ServerProcess;
let env: CliEnv;
const outputs: string[] = [];

async function svc(args: string[], cwd?: string) {
  const r = await runCli(args, { env, cwd });
  outputs.push(r.stdout, r.stderr);
  return r;
}

/** The same, in-process. */
async function inProcess(args: string[], cwd?: string) {
  const r = await runProgram(args, { env, cwd });
  outputs.push(r.stdout, r.stderr);
  return r;
}

beforeAll(async () => {
  server = await startServerProcess();
  env = isolatedEnv({ SVC_BASE_URL: server.url, SVC_TOKEN: server.token, SVC_PROJECT: 'DEMO', SVC_HEARTBEAT_INTERVAL: '1s' });
});

afterAll(async () => {
  const violations = await server.stop();
  expect(violations, 'responses that break the contract document').toEqual([]);
  // Nothing the CLI printed in any test may carry the token.
  for (const text of outputs) expect(text).not.toContain(server.token);
});

describe.concurrent('svc run KEY end to end', () => {
  test('an agent that commits: implemented, run completed/succeeded, exit 0', async () => {
    const repo = await makeRepo();
    const r = await svc(['run', 'DEMO-6', '--agent-cmd', COMMIT, '--repo', repo, '--json']);
    expect(r.code, r.stderr).toBe(0);
    const summary = JSON.parse(r.stdout) as { runId: string; stopReason: string; status: string };
    expect(summary).toMatchObject({ stopReason: 'completed', status: 'succeeded' });

    const shown = await svc(['runs', 'show', summary.runId, '--json']);
    const record = JSON.parse(shown.stdout) as DispatchRun;
    expect(record).toMatchObject({ command: 'run', origin: 'local', status: 'succeeded', stopReason: 'completed' });
    expect(record.cards).toEqual([expect.objectContaining({ workItemKey: 'DEMO-6', disposition: 'implemented', sessionBranch: 'svc/DEMO-6', exitCode: 0 })]);
    expect(record.lastHeartbeatAt).not.toBeNull();
    expect(await run('git', ['log', '--format=%s', 'svc/DEMO-6', '-1'], repo)).toBe('DEMO-6: done\n');
  });

  test('an agent that fails: leg failed with its exit code, run halted/failed, exit 1', async () => {
    const repo = await makeRepo();
    const r = await svc(['run', 'DEMO-3', 'DEMO-5', '--agent-cmd', 'sh -c "exit 3"', '--repo', repo, '--json']);
    expect(r.code).toBe(1);
    const { runId } = JSON.parse(r.stdout) as { runId: string };
    const record = JSON.parse((await svc(['runs', 'show', runId, '--json'])).stdout) as DispatchRun;
    expect(record).toMatchObject({ status: 'failed', stopReason: 'halted' });
    expect(record.cards.map((c) => [c.workItemKey, c.disposition, c.exitCode])).toEqual([
      ['DEMO-3', 'failed', 3],
      ['DEMO-5', 'not_reached', null],
    ]);
  });

  test('the agent gets the SVC_* variables and never the token', async () => {
    const repo = await makeRepo();
    const dump =
      'sh -c "env > $SVC_WORKDIR/../env-$SVC_CARD_KEY.txt; git -c user.name=a -c user.email=a@example.invalid commit -q --allow-empty -m \\"$SVC_CARD_KEY: env\\""';
    const r = await svc(['run', 'DEMO-8', '--agent-cmd', dump, '--repo', repo, '--json']);
    expect(r.code, r.stderr).toBe(0);
    const { runId } = JSON.parse(r.stdout) as { runId: string };
    const seen = await run('sh', ['-c', `cat "$(git rev-parse --git-common-dir)"/svc-worktrees/env-DEMO-8.txt`], repo);
    expect(seen).toContain('SVC_CARD_KEY=DEMO-8');
    expect(seen).toContain(`SVC_RUN_ID=${runId}`);
    expect(seen).toContain('SVC_BRANCH=svc/DEMO-8');
    expect(seen).toMatch(/SVC_PROMPT_FILE=\S+/);
    expect(seen).not.toContain(server.token);
    expect(seen).not.toMatch(/^SVC_TOKEN=/m);
  });

  test.each([
    [['run', 'demo-1', '--agent-cmd', 'true'], 2, /not a work item key|DEMO-1|key/i],
    [['run', 'DEMO-6'], 2, /no agent/],
    [['run', 'DEMO-6', '--agent', 'clippy'], 2, /clippy/],
    [['run', 'DEMO-6', '--agent-cmd', 'true', '--idle-timeout', 'soon'], 2, /invalid duration/],
    // What was typed wrong comes before what was not typed at all.
    [['run', 'DEMO-6', '--timeout', 'abc'], 2, /^svc: invalid duration "abc" for --timeout/],
    [['run', 'DEMO-999', '--agent-cmd', 'true'], 4, /DEMO-999/],
  ])('bad input %j → exit %i with one line', async (args, code, message) => {
    const r = await inProcess(args, await makeRepo());
    expect(r.code).toBe(code);
    expect(r.stderr).toMatch(message);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });

  test('a bad flag value is said before a missing token, as gh parses its flags before it asks for a login', async () => {
    const { SVC_TOKEN: _, ...noToken } = env;
    const r = await runProgram(['run', 'DEMO-6', '--agent-cmd', 'true', '--timeout', 'abc'], { env: noToken, cwd: await makeRepo() });
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toMatch(/^svc: invalid duration "abc" for --timeout/);
    // With the value right, the missing token is what is said, before the agent not named either.
    const ok = await runProgram(['run', 'DEMO-6', '--timeout', '5s'], { env: noToken, cwd: await makeRepo() });
    expect(ok.code).toBe(3);
    expect(ok.stderr.trim()).toMatch(/^svc: not logged in/);
  });

  test('--dry-run prints the card set with skip reasons and opens nothing', async () => {
    const before = (await inProcess(['api', 'GET', '/projects/DEMO/work-items/count'])).stdout;
    const r = await inProcess(['run_scope', 'DEMO-1', '--dry-run'], await makeRepo());
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/DEMO-3/);
    expect(r.stdout).toMatch(/DEMO-4/);
    expect((await inProcess(['api', 'GET', '/projects/DEMO/work-items/count'])).stdout).toBe(before);
  });
});

describe('svc demo', () => {
  test('runs a whole dispatch run on the embedded service, exits 0 and leaves nothing in the temp folder', async () => {
    // A temp folder of its own: the demo's throwaway repository and state folder (and anything else
    // it made) are gone once it ends; `--keep` keeps them (test/cli/json-shapes.test.ts).
    const tmp = mkdtempSync(join(tmpdir(), 'svc-demo-tmp-'));
    const r = await runCli(['demo'], { env: isolatedEnv({ TMPDIR: tmp }) });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`repository ${tmp}/svc-demo-repo-`);
    expect(readdirSync(tmp)).toEqual([]);
    expect(r.stderr).toMatch(/completed · succeeded/);
    expect(r.stderr).toMatch(/svc\/DEMO-3/);
    // The close-out is told about every leg that landed: events are flushed before it is read.
    expect(r.stderr).toMatch(/close-out of DEMO-2 on svc\/DEMO-2 \(3 landed\)/);
  });
});
