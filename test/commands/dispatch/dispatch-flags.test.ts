// The flags of this issue through the command line, run in-process: --max-cost refused for agents that report no
// price, --agent-format only with --agent-cmd, --push reaching a bare origin.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isolatedEnv, makeRepo, run, type CliEnv } from '../../support/cli.js';
import { svcInProcess } from '../../support/svc-in-process.js';
import { startTestService, type TestService } from '../../support/service.js';
import { addBareOrigin, refOf } from '../../support/git-remote.js';

let svc: TestService;
let env: CliEnv;
let repo: string;
beforeAll(async () => {
  svc = await startTestService();
  repo = await makeRepo();
  env = isolatedEnv({ SVC_BASE_URL: svc.url, SVC_TOKEN: svc.token, SVC_PROJECT: svc.projectKey });
});
afterAll(async () => {
  await svc.close();
});

const item = (title: string) => svc.admin.createWorkItem({ projectKey: svc.projectKey, kind: 'task', title, type: 'code' }).key;
const cli = (args: string[]) => svcInProcess(args, { env, cwd: repo });
const runsOnService = async () => svc.db.prepare('SELECT count(*) AS n FROM dispatch_runs').get() as { n: number };

describe('--max-cost and --agent-format', () => {
  it.each([
    [['--agent', 'aider'], /--agent aider reports none/],
    [['--agent', 'gemini'], /--agent gemini reports none/],
    [['--agent-cmd', 'true'], /--agent-cmd without --agent-format reports none/],
    [['--agent-cmd', 'true', '--agent-format', 'codex'], /--agent-cmd with --agent-format codex reports none/],
  ])('%j with --max-cost exits 2 with one line and opens nothing', async (agent, message) => {
    const before = (await runsOnService()).n;
    const r = await cli(['run', item('A'), ...agent, '--max-cost', '1']);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^svc: --max-cost needs an agent that reports its spend/);
    expect(r.stderr).toMatch(message);
    expect((await runsOnService()).n).toBe(before);
  });

  it.each([
    [['--agent', 'claude', '--agent-format', 'claude'], 'svc: --agent-format describes an --agent-cmd; a preset (--agent) has its own'],
    [['--agent-cmd', 'true', '--agent-format', 'aider'], "svc: unknown --agent-format 'aider'; one of claude, codex, gemini, opencode"],
  ])('%j is a usage error', async (agent, message) => {
    const r = await cli(['run', item('B'), ...agent, '--dry-run']);
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe(message);
  });

  it('--agent-cmd with --agent-format claude takes --max-cost and stops max on the reported spend', async () => {
    const [a, b] = [item('C'), item('D')];
    const line = JSON.stringify({ type: 'result', subtype: 'success', is_error: false, result: 'ok', total_cost_usd: 2 });
    const r = await cli([
      'run',
      a,
      b,
      '--agent-cmd',
      `"${process.execPath}" -e 'console.log(process.argv[1])' '${line}'`,
      '--agent-format',
      'claude',
      '--allow-empty',
      '--max-cost',
      '1',
      '--json',
    ]);
    expect(r.code).toBe(0);
    const summary = JSON.parse(r.stdout) as { stopReason: string; legs: Array<{ key: string; costUsd: number }> };
    expect(summary.stopReason).toBe('max');
    expect(summary.legs.map((l) => [l.key, l.costUsd])).toEqual([[a, 2]]);
  });
});

describe('--push on a local run', () => {
  it('pushes svc/KEY to a bare origin with plain git', async () => {
    const origin = await addBareOrigin(repo);
    const k = item('push');
    const agent = 'sh -c "echo x > f-$SVC_CARD_KEY && git add -A && git -c user.name=a -c user.email=a@example.invalid commit -qm \\"$SVC_CARD_KEY: x\\""';
    const r = await cli(['run', k, '--agent-cmd', agent, '--push']);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`${k}: pushed svc/${k}`);
    expect(await refOf(origin, `refs/heads/svc/${k}`)).toBe(await refOf(repo, `refs/heads/svc/${k}`));
    await run('git', ['remote', 'remove', 'origin'], repo);
  });
});

describe('svc review', () => {
  it('prints the review text in the summary and pushes nothing, even with --push', async () => {
    const origin = await addBareOrigin(repo);
    const k = svc.admin.createWorkItem({
      projectKey: svc.projectKey,
      kind: 'task',
      title: 'reviewed',
      type: 'code',
      deliveries: [
        {
          repo: 'acme/shop',
          number: 1,
          title: 'PR',
          url: 'https://git.example.test/acme/shop/pull/1',
          state: 'open',
          ci: 'passing',
          baseRef: 'main',
          defaultBranch: 'main',
        },
      ],
    }).key;
    await run('git', ['push', '-q', 'origin', `main:refs/heads/svc/${k}`], repo);
    const before = (await run('git', ['for-each-ref'], origin)).trim();
    const r = await cli(['review', k, '--agent-cmd', 'sh -c "echo Reads well.; echo One nit: rename x."', '--push']);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`review of ${k}:\n  Reads well.\n  One nit: rename x.`);
    expect((await run('git', ['for-each-ref'], origin)).trim()).toBe(before);
    await run('git', ['remote', 'remove', 'origin'], repo);
  });
});
