// `--attempts` from the command line: refused in one line (exit 2, no run opened) where no check can
// pick a winner or the count is out of range, and, as root through the default agent users, a real
// best-of-2 run whose summary names the attempt the check picked.
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { continueFlags } from '../../../src/commands/dispatch/continue-flags.js';
import { makeRepo, run } from '../../support/cli.js';
import { programEnv, runProgram } from '../../support/program.js';
import { serviceForFile } from '../../support/service.js';

const svc = serviceForFile();

const env = (over: Record<string, string | undefined> = {}) => programEnv(svc, { SVC_HEARTBEAT_INTERVAL: '1s', ...over });

async function repoWith(workflow: string | null): Promise<string> {
  const repo = await makeRepo();
  if (workflow === null) return repo;
  mkdirSync(join(repo, '.svc'));
  writeFileSync(join(repo, '.svc', 'workflow.yml'), workflow);
  await run('git', ['add', '.svc'], repo);
  await run('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.invalid', 'commit', '-qm', 'workflow'], repo);
  return repo;
}

const runsOpened = () => (svc.db.prepare('SELECT count(*) AS n FROM dispatch_runs').get() as { n: number }).n;
const card = (title: string) => svc.admin.createWorkItem({ projectKey: svc.projectKey, kind: 'task', title, type: 'code' }).key;

describe('--attempts refused', () => {
  test.each([
    [
      '--attempts 2 without a verify',
      null,
      ['--attempts', '2'],
      'svc: --attempts needs a check to pick the winner: set verify in .svc/workflow.yml or pass --verify CMD',
    ],
    [
      '--attempts 2 with --no-verify',
      'verify: "true"\n',
      ['--attempts', '2', '--no-verify'],
      'svc: --attempts needs a check to pick the winner: set verify in .svc/workflow.yml or pass --verify CMD',
    ],
    [
      "the workflow's attempts: with --no-verify",
      'verify: "true"\nattempts: 3\n',
      ['--no-verify'],
      "svc: the workflow's attempts: needs a check to pick the winner: set verify in .svc/workflow.yml or pass --verify CMD",
    ],
    ['--attempts 9', 'verify: "true"\n', ['--attempts', '9'], 'svc: --attempts takes 1 to 8, not 9'],
    [
      'a second --agent without --attempts',
      'verify: "true"\n',
      ['--agent', 'claude', '--agent', 'codex'],
      'svc: --agent more than once gives attempts their agents: add --attempts N (N > 1)',
    ],
    [
      '--max-cost with an attempt agent that reports no price',
      'verify: "true"\n',
      ['--attempts', '2', '--agent', 'claude', '--agent', 'codex', '--max-cost', '1'],
      'svc: --max-cost needs an agent that reports its spend in dollars (claude, opencode, or --agent-cmd with --agent-format claude|opencode); --agent codex reports none',
    ],
    [
      '--attempts with --no-worktree',
      'verify: "true"\n',
      ['--attempts', '2', '--no-worktree'],
      'svc: --attempts runs each attempt in a worktree of its own: drop --no-worktree',
    ],
    [
      'attempts: without verify in the file',
      'attempts: 2\n',
      [],
      'svc: .svc/workflow.yml (main):1: attempts needs verify: the check picks the winning attempt',
    ],
  ] as const)('%s: one line, exit 2, no run opened', async (_name, workflow, flags, line) => {
    const repo = await repoWith(workflow);
    const before = runsOpened();
    const agent = (flags as readonly string[]).includes('--agent') ? [] : ['--agent-cmd', 'true'];
    // Stand-ins for the presets, so only the attempts' rule can refuse the run.
    const bin = mkdtempSync(join(tmpdir(), 'svc-attempts-bin-'));
    for (const name of ['claude', 'codex']) writeFileSync(join(bin, name), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    const r = await runProgram(['run', card('never runs'), '--repo', repo, ...agent, ...flags], { env: env({ PATH: `${bin}:${process.env.PATH}` }) });
    expect([r.code, r.stderr.trim()]).toEqual([2, line]);
    expect(runsOpened()).toBe(before);
  });
});

describe('--attempts run', () => {
  const users: [string, string | undefined][] = [
    ['--agent-user none', 'none'],
    ...(process.getuid?.() === 0 ? [['the default agent users', undefined] as [string, undefined]] : []),
  ];
  test.each(users)('best of 2 picks the attempt that passes the check (agents as %s)', async (_name, agentUser) => {
    const repo = await repoWith('verify: test "$(cat attempt.txt)" = 2\n');
    const dir = mkdtempSync(join(tmpdir(), 'svc-attempts-cli-'));
    chmodSync(dir, 0o755);
    writeFileSync(
      join(dir, 'agent.sh'),
      'echo "$SVC_ATTEMPT" > attempt.txt && git add attempt.txt && git -c user.name=a -c user.email=a@example.invalid commit -qm "$SVC_CARD_KEY: attempt $SVC_ATTEMPT"\n',
      { mode: 0o755 },
    );
    const key = card('two tries');
    const r = await runProgram(['run', key, '--repo', repo, '--agent-cmd', `sh ${join(dir, 'agent.sh')}`, '--attempts', '2', '--parallel', '2', '--json'], {
      env: env({ SVC_AGENT_USER: agentUser }),
    });
    expect(r.code, r.stderr).toBe(0);
    const leg = JSON.parse(r.stdout).legs[0];
    expect(leg).toMatchObject({ disposition: 'implemented', sessionBranch: `svc/${key}`, bestOf: { winner: 2 } });
    expect(leg.bestOf.attempts).toHaveLength(2);
    expect(r.stderr).toMatch(new RegExp(`${key} implemented in [\\d.]+s \\(exit 0, attempt 2 of 2 won\\)`));
    expect((await run('git', ['show', `svc/${key}:attempt.txt`], repo)).trim()).toBe('2');
  });
});

describe('--agent and --model repeated', () => {
  test('attempt n runs the n-th --agent with the n-th --model, each cycling', async () => {
    const repo = await repoWith('verify: test -f args.txt\n');
    const bin = mkdtempSync(join(tmpdir(), 'svc-attempts-bin-'));
    chmodSync(bin, 0o755);
    for (const name of ['claude', 'codex'])
      writeFileSync(
        join(bin, name),
        `#!/bin/sh\ncat > /dev/null\necho "${name} $SVC_ATTEMPT $*" > args.txt\ngit add args.txt\ngit -c user.name=a -c user.email=a@example.invalid commit -qm "$SVC_CARD_KEY: ${name}"\n`,
        { mode: 0o755 },
      );
    const key = card('three agents');
    const args = ['run', key, '--repo', repo, '--attempts', '3', '--parallel', '3', '--all-attempts', '--json'];
    const flags = ['--agent', 'claude', '--agent', 'codex', '--model', 'm-one', '--model', 'm-two', '--model', 'm-three'];
    const r = await runProgram([...args, ...flags], {
      env: env({ PATH: `${bin}:${process.env.PATH}`, SVC_AGENT_USER: process.getuid?.() === 0 ? undefined : 'none' }),
    });
    expect(r.code, r.stderr).toBe(0);
    const leg = JSON.parse(r.stdout).legs[0];
    expect(leg.bestOf.attempts.map((a: { agent: string }) => a.agent)).toEqual(['claude (m-one)', 'codex (m-two)', 'claude (m-three)']);
    const seen = async (n: number) => (await run('git', ['show', `svc/${key}-attempt-${n}:args.txt`], repo)).trim();
    expect(await seen(1)).toMatch(/^claude 1 -p .* --model m-one$/);
    expect(await seen(2)).toMatch(/^codex 2 exec .* --model m-two -$/);
    expect(await seen(3)).toMatch(/^claude 3 -p .* --model m-three$/);
  });

  test('--model more than once without --attempts, or with --agent-cmd: one line, exit 2', async () => {
    const repo = await repoWith('verify: "true"\n');
    const alone = await runProgram(['run', card('never'), '--repo', repo, '--agent-cmd', 'true', '--model', 'a', '--model', 'b'], { env: env() });
    expect([alone.code, alone.stderr.trim()]).toEqual([2, 'svc: --model more than once gives attempts their models: add --attempts N (N > 1)']);
    const cmd = await runProgram(['run', card('never'), '--repo', repo, '--agent-cmd', 'true', '--attempts', '2', '--model', 'a', '--model', 'b'], {
      env: env(),
    });
    expect([cmd.code, cmd.stderr.trim()]).toEqual([2, 'svc: --model more than once picks the models of a preset (--agent); an --agent-cmd names its own']);
  });
});

describe('continue of a run with attempts', () => {
  test("takes the original run's attempts, agents and models from run.json; flags still win", () => {
    const recorded = {
      agent: { agent: 'claude', model: 'a' },
      agents: [
        { agent: 'claude', model: 'a' },
        { agent: 'codex', model: 'b' },
      ],
      attempts: 2,
      allAttempts: true,
      pushAttempts: true,
    };
    expect(continueFlags({}, recorded)).toMatchObject({ agent: ['claude', 'codex'], model: ['a', 'b'], attempts: '2', allAttempts: true, pushAttempts: true });
    expect(continueFlags({ attempts: '3', agent: ['gemini'] }, recorded)).toMatchObject({ attempts: '3', agent: ['gemini'] });
  });

  test('runs again, with its attempts, only the cards no attempt implemented', async () => {
    const shared = mkdtempSync(join(tmpdir(), 'svc-attempts-continue-'));
    chmodSync(shared, 0o777);
    const a = card('lands at once');
    const b = card('lands once the marker is there');
    const marker = join(shared, 'marker');
    // Attempt 2 passes; card b only once the marker exists.
    const repo = await repoWith(`verify: test "$(cat attempt.txt)" = 2 && { test "$SVC_CARD_KEY" != ${b} || test -f ${marker}; }\n`);
    writeFileSync(
      join(shared, 'agent.sh'),
      `echo "$SVC_CARD_KEY $SVC_ATTEMPT" >> ${shared}/ran.txt\necho "$SVC_ATTEMPT" > attempt.txt && git add attempt.txt && git -c user.name=a -c user.email=a@example.invalid commit -q --allow-empty -m "$SVC_CARD_KEY: attempt $SVC_ATTEMPT"\n`,
      { mode: 0o755 },
    );
    // Every attempt's uid appends to it.
    writeFileSync(join(shared, 'ran.txt'), '', { mode: 0o666 });
    chmodSync(join(shared, 'ran.txt'), 0o666);
    const e = env({ SVC_AGENT_USER: process.getuid?.() === 0 ? undefined : 'none' });
    const first = await runProgram(
      [
        'run',
        a,
        b,
        '--repo',
        repo,
        '--agent-cmd',
        `sh ${join(shared, 'agent.sh')}`,
        '--attempts',
        '2',
        '--parallel',
        '2',
        '--on-failure',
        'continue',
        '--json',
      ],
      { env: e },
    );
    const s1 = JSON.parse(first.stdout);
    expect(s1.legs.map((l: { key: string; disposition: string }) => [l.key, l.disposition])).toEqual([
      [a, 'implemented'],
      [b, 'failed'],
    ]);
    writeFileSync(marker, '');
    chmodSync(marker, 0o644);
    const ranBefore = (await run('cat', [join(shared, 'ran.txt')], shared)).trim().split('\n');
    const again = await runProgram(['continue', s1.runId, '--repo', repo, '--json'], { env: e });
    expect(again.code, again.stderr).toBe(0);
    const s2 = JSON.parse(again.stdout);
    const legB = s2.legs.find((l: { key: string }) => l.key === b);
    expect(legB).toMatchObject({ disposition: 'implemented', bestOf: { winner: 2 } });
    expect(s2.legs.find((l: { key: string }) => l.key === a)).toBeUndefined();
    // Only b's two attempts ran again.
    const ranAfter = (await run('cat', [join(shared, 'ran.txt')], shared)).trim().split('\n');
    expect(ranAfter.slice(ranBefore.length).sort()).toEqual([`${b} 1`, `${b} 2`]);
  });
});
