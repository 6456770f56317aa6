// The workflow from the command line: `svc workflow check` (one line per mistake, exit 2), a dispatch
// command that refuses a malformed file in one line before any run opens, and the policy read from
// the base commit even when the agent edits it, with agents as svc's own user and, as root, as the
// default agent user.
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { makeRepo, run } from '../../support/cli.js';
import { programEnv, runProgram } from '../../support/program.js';
import { serviceForFile } from '../../support/service.js';

const svc = serviceForFile();

const env = (over: Record<string, string | undefined> = {}) => programEnv(svc, { SVC_HEARTBEAT_INTERVAL: '1s', ...over });

/** A repository whose main commit holds `.svc/workflow.yml` with `text`. */
async function repoWith(text: string, commit = true): Promise<string> {
  const repo = await makeRepo();
  mkdirSync(join(repo, '.svc'));
  writeFileSync(join(repo, '.svc', 'workflow.yml'), text);
  if (commit) {
    await run('git', ['add', '.svc'], repo);
    await run('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.invalid', 'commit', '-qm', 'workflow'], repo);
  }
  return repo;
}

const runsOpened = () => (svc.db.prepare('SELECT count(*) AS n FROM dispatch_runs').get() as { n: number }).n;

describe('svc workflow check', () => {
  test('a good file: one line saying what it does, exit 0', async () => {
    const repo = await repoWith('setup: npm ci\nverify: npm test\nverify_attempts: 1\nports: 2\n');
    const r = await runProgram(['workflow', 'check', '--repo', repo], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr.trim()).toBe(`${repo}/.svc/workflow.yml: ok: setup 1 command, 2 ports per leg, verify \`npm test\` (up to 1 more attempt)`);
  });

  test('each mistake one line with its line number, exit 2', async () => {
    const repo = await repoWith('setup: npm ci\nports: lots\nverfy: npm test\n', false);
    const r = await runProgram(['workflow', 'check'], { env: env(), cwd: repo });
    expect(r.code).toBe(2);
    expect(r.stdout.trim().split('\n')).toEqual([
      '.svc/workflow.yml:2: ports must be a whole number from 1 to 100, not "lots"',
      ".svc/workflow.yml:3: unknown key 'verfy' (one of setup, copy, ports, verify, verify_attempts, teardown, prompt, protect, env, network, timeouts, attempts)",
    ]);
  });

  test('no file: one line, exit 4; --ref checks the committed file', async () => {
    const repo = await makeRepo();
    const r = await runProgram(['workflow', 'check', '--repo', repo], { env: env() });
    expect(r.code).toBe(4);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    const committed = await repoWith('verify: 3\n');
    writeFileSync(join(committed, '.svc', 'workflow.yml'), 'verify: npm test\n');
    const tree = await runProgram(['workflow', 'check', '--repo', committed], { env: env() });
    expect(tree.code).toBe(0);
    expect(tree.stderr).toContain('differs from HEAD');
    const head = await runProgram(['workflow', 'check', '--repo', committed, '--ref', 'HEAD'], { env: env() });
    expect(head.code).toBe(2);
    expect(head.stdout.trim()).toBe('.svc/workflow.yml (HEAD):1: verify must be a string (a shell command), not 3');
  });
});

describe('a dispatch command and the workflow', () => {
  test('a malformed file: one line, exit 2, and no run is opened', async () => {
    const repo = await repoWith('verify: [npm test\nports: 2\n');
    const key = svc.admin.createWorkItem({ projectKey: svc.projectKey, kind: 'task', title: 'never runs', type: 'code' }).key;
    const before = runsOpened();
    const r = await runProgram(['run', key, '--repo', repo, '--agent-cmd', 'true'], { env: env() });
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^svc: \.svc\/workflow\.yml \(main\):\d+: /);
    expect(runsOpened()).toBe(before);
  });

  const users: [string, string | undefined][] = [
    ['--agent-user none', 'none'],
    ...(process.getuid?.() === 0 ? [['the default agent user', undefined] as [string, undefined]] : []),
  ];
  test.each(users)("the policy is the base commit's even when the agent edits it (agents as %s)", async (_name, agentUser) => {
    const repo = await repoWith('verify: test -f ok.txt\n');
    const dir = mkdtempSync(join(tmpdir(), 'svc-wf-agent-'));
    chmodSync(dir, 0o755);
    // The agent "passes" its own check by rewriting it, and commits that.
    writeFileSync(
      join(dir, 'agent.sh'),
      'printf "verify: \\"true\\"\\n" > .svc/workflow.yml && git add .svc && git -c user.name=a -c user.email=a@example.invalid commit -q --allow-empty -m "$SVC_CARD_KEY: easier check"\n',
      { mode: 0o755 },
    );
    const key = svc.admin.createWorkItem({ projectKey: svc.projectKey, kind: 'task', title: 'cheats', type: 'code' }).key;
    const args = ['run', key, '--repo', repo, '--agent-cmd', `sh ${join(dir, 'agent.sh')}`, '--json'];
    const e = env({ SVC_AGENT_USER: agentUser });
    for (const attempt of ['its own leg', 'a later run of its branch']) {
      const r = await runProgram(args, { env: e });
      expect(r.code, `${attempt}: ${r.stderr}`).toBe(1);
      expect(JSON.parse(r.stdout).legs[0], attempt).toMatchObject({
        disposition: 'failed',
        reason: 'verify failed (exit 1)',
        check: { command: 'test -f ok.txt' },
      });
    }
    expect(await run('git', ['show', `svc/${key}:.svc/workflow.yml`], repo)).toBe('verify: "true"\n');
  });

  test('--no-verify and --verify CMD over the file', async () => {
    const repo = await repoWith('verify: "false"\n');
    const key = svc.admin.createWorkItem({ projectKey: svc.projectKey, kind: 'task', title: 'flags', type: 'code' }).key;
    const agent = 'git -c user.name=a -c user.email=a@example.invalid commit -q --allow-empty -m "{key}: x"';
    const skipped = await runProgram(['run', key, '--repo', repo, '--agent-cmd', agent, '--no-verify', '--json'], { env: env({ SVC_AGENT_USER: 'none' }) });
    expect(skipped.code, skipped.stderr).toBe(0);
    expect(JSON.parse(skipped.stdout).legs[0]).toMatchObject({ disposition: 'implemented', check: { status: 'none' } });
    const other = await runProgram(['run', key, '--repo', repo, '--agent-cmd', agent, '--verify', 'exit 7', '--json'], {
      env: env({ SVC_AGENT_USER: 'none' }),
    });
    expect(JSON.parse(other.stdout).legs[0]).toMatchObject({ disposition: 'failed', reason: 'verify failed (exit 7)' });
    const empty = await runProgram(['run', key, '--repo', repo, '--agent-cmd', agent, '--verify', ' '], { env: env({ SVC_AGENT_USER: 'none' }) });
    expect([empty.code, empty.stderr.trim()]).toEqual([2, 'svc: --verify needs a command (or --no-verify for none)']);
  });
});
