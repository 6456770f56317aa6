// `--hosted` and the flags that shape a run: openDispatchRun's body carries the agent, the model, the scope
// and the cards, and those reach the runner (getDispatchRun, read by `svc attach`); every other such flag is
// refused in one line, exit 2, before anything opens, naming where it is set instead.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintRunCredential } from '../../../src/server/dispatch-runs/index.js';
import { isolatedEnv, makeRepo, type CliEnv } from '../../support/cli.js';
import { svcInProcess } from '../../support/svc-in-process.js';
import { startTestService, type TestService } from '../../support/service.js';

let svc: TestService;
let env: CliEnv;
beforeAll(async () => {
  svc = await startTestService();
  env = isolatedEnv({ SVC_BASE_URL: svc.url, SVC_TOKEN: svc.token, SVC_PROJECT: svc.projectKey });
});
afterAll(async () => {
  await svc.close();
});

const item = (title: string) => svc.admin.createWorkItem({ projectKey: svc.projectKey, kind: 'task', title, type: 'research' }).key;
const runsOpened = () => (svc.db.prepare('SELECT count(*) AS n FROM dispatch_runs').get() as { n: number }).n;

const ATTACH = "pass FLAG to the runner's svc attach";
const VERIFY = "set verify: in the repository's .svc/workflow.yml";

describe('svc run --hosted', () => {
  it.each([
    [['--no-pr'], '--no-pr', ATTACH],
    [['--pr'], '--pr', ATTACH],
    [['--draft'], '--draft', ATTACH],
    [
      ['--github-api-url', 'https://ghe.example.test/api/v3'],
      '--github-api-url',
      "set SVC_GITHUB_API_URL in the runner's environment (or svc attach --github-api-url)",
    ],
    [['--send-logs'], '--send-logs', ATTACH],
    [['--verify', 'npm test'], '--verify', VERIFY],
    [['--no-verify'], '--no-verify', VERIFY],
    [['--setup', 'npm ci'], '--setup', "set setup: in the repository's .svc/workflow.yml"],
    [['--attempts', '2'], '--attempts', "set attempts: in the repository's .svc/workflow.yml"],
    [
      ['--agent', 'claude', '--agent', 'codex'],
      '--agent (more than once)',
      "set attempts: in the repository's .svc/workflow.yml for best of N with the run's one agent",
    ],
    [
      ['--model', 'a', '--model', 'b'],
      '--model (more than once)',
      "set attempts: in the repository's .svc/workflow.yml for best of N with the run's one model",
    ],
    [['--all-attempts'], '--all-attempts', "a hosted run's attempts stop once one won, and only the winner's svc/KEY is pushed"],
    [['--push-attempts'], '--push-attempts', "a hosted run's attempts stop once one won, and only the winner's svc/KEY is pushed"],
    [['--max-cost', '5'], '--max-cost', ATTACH],
    [['--timeout', '10m'], '--timeout', "set the run's deadline with svc server --hosted-timeout (or svc attach --timeout)"],
    [['--idle-timeout', '1m'], '--idle-timeout', ATTACH],
    [['--card-timeout', '1m'], '--card-timeout', ATTACH],
    [['--kill-grace', '1s'], '--kill-grace', ATTACH],
    [['--heartbeat-interval', '5s'], '--heartbeat-interval', 'a hosted run sends no heartbeat'],
    [['--parallel', '2'], '--parallel', ATTACH],
    [['--on-failure', 'continue'], '--on-failure', ATTACH],
    [['--allow-empty'], '--allow-empty', ATTACH],
    [['--no-worktree'], '--no-worktree', ATTACH],
    [['--push'], '--push', ATTACH],
    [['--no-push'], '--no-push', ATTACH],
    [['--agent-cmd', 'sh -c true'], '--agent-cmd', "set the runner's agent with svc server --hosted-agent-cmd (or svc attach --agent-cmd)"],
    [['--agent-user', 'none'], '--agent-user', 'the runner gives each agent a pool uid of its own'],
    [['--agent-env', 'NPM_TOKEN'], '--agent-env', "set env: in the repository's .svc/workflow.yml"],
    [['--git-identity', 'A <a@example.test>'], '--git-identity', ATTACH],
    [['--no-reconcile'], '--no-reconcile', ATTACH],
    [['--network', 'none'], '--network', "pass --network to the runner's svc attach"],
    [
      ['--allow-host', 'example.test'],
      '--allow-host',
      "set network: allow: in the repository's .svc/workflow.yml (or pass --allow-host to the runner's svc attach)",
    ],
  ])('refuses %j before the run opens', async (args, flag, where) => {
    const key = item(`refused ${flag}`);
    const before = runsOpened();
    const r = await svcInProcess(['run', key, '--hosted', '--agent', 'claude', ...args], { env });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      `svc: ${flag} does not travel with --hosted (a hosted run carries only its agent, model and cards): ${where.replace('FLAG', flag)}\n`,
    );
    expect(runsOpened()).toBe(before);
  });

  it('opens the run with --agent and --model, and the runner reads them (getDispatchRun)', async () => {
    const key = item('travels');
    const r = await svcInProcess(['run', key, '--hosted', '--agent', 'codex', '--model', 'gpt-test', '--json'], { env });
    expect(r.code, r.stderr).toBe(0);
    const { run } = JSON.parse(r.stdout) as { run: { id: string; agent: string; model: string; origin: string } };
    expect(run).toMatchObject({ agent: 'codex', model: 'gpt-test', origin: 'hosted' });
    const stored = await svc.call('GET', `/dispatch-runs/${run.id}`);
    expect(stored.body).toMatchObject({ agent: 'codex', model: 'gpt-test', cards: [{ workItemKey: key }] });

    // The runner: svc attach with the run's credential reads the run and plans with its agent.
    const runner = isolatedEnv({ SVC_BASE_URL: svc.url, SVC_RUN_ID: run.id, SVC_RUN_TOKEN: mintRunCredential(svc.db, run.id) });
    const plan = await svcInProcess(['attach', '--dry-run'], { env: runner });
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toContain('agent: codex model gpt-test');
  });

  it('continue RUN --hosted refuses only what was typed, not the flags it takes from the recorded run', async () => {
    const repo = await makeRepo();
    const key = item('fails here, continues hosted');
    const local = await svcInProcess(['run', key, '--agent-cmd', 'sh -c "exit 3"', '--parallel', '2', '--no-verify', '--heartbeat-interval', '5s'], {
      env,
      cwd: repo,
    });
    expect(local.code, local.stderr).toBe(1);
    const runId = /run (\S+) · run · halted · failed/.exec(local.stderr)![1]!;
    const hosted = await svcInProcess(['continue', runId, '--hosted', '--agent', 'claude', '--json'], { env, cwd: repo });
    expect(hosted.code, hosted.stderr).toBe(0);
    expect(JSON.parse(hosted.stdout).run).toMatchObject({ origin: 'hosted', agent: 'claude', cards: [{ workItemKey: key }] });
    const typed = await svcInProcess(['continue', runId, '--hosted', '--agent', 'claude', '--parallel', '2'], { env, cwd: repo });
    expect([typed.code, typed.stderr]).toEqual([2, expect.stringMatching(/^svc: --parallel does not travel with --hosted/)]);
  });
});
