// The repository's workflow around real legs (src/dispatch/workflow/leg-steps.ts), against the real
// local service and real worktrees, once with agents as svc's own user (`--agent-user none`) and,
// as root, once as the default agent user in a clone of its own: setup before the agent, `.env`
// copied in and never committed, ports per leg, the check deciding the outcome, the agent started
// again with the check's output, and teardown whatever happened.
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_POOL, type AgentPoolSpec } from '../../../src/dispatch/boundary/user.js';
import { runDispatch } from '../../../src/dispatch/lifecycle/dispatch.js';
import type { DispatchOptions } from '../../../src/dispatch/lifecycle/types.js';
import { buildRunReport } from '../../../src/dispatch/report/model.js';
import { renderHtml } from '../../../src/dispatch/report/html.js';
import { renderJunit } from '../../../src/dispatch/report/junit.js';
import { renderMarkdown } from '../../../src/dispatch/report/markdown.js';
import { logPath, runPaths } from '../../../src/dispatch/state/folder.js';
import { EMPTY_WORKFLOW, type Workflow } from '../../../src/dispatch/workflow/policy.js';
import { PORT_RANGE } from '../../../src/dispatch/workflow/ports.js';
import { run } from '../../support/cli.js';
import { engineEachTest } from '../../support/engine.js';

const isRoot = process.getuid?.() === 0;
const USERS: [string, AgentPoolSpec | null][] = [
  ['--agent-user none', null],
  ...(isRoot ? [['the default agent users (a uid per leg)', DEFAULT_POOL] as [string, AgentPoolSpec]] : []),
];

const COMMIT = 'git -c user.name=agent -c user.email=agent@example.invalid commit -q';

/** A script in a folder every user may read (agents of another user run it). */
function script(body: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-wf-agent-'));
  chmodSync(dir, 0o755);
  const file = join(dir, 'agent.sh');
  writeFileSync(file, `set -e\n${body}\n`, { mode: 0o755 });
  return `sh ${file}`;
}

const wf = (over: Partial<Workflow>): Workflow => ({ ...EMPTY_WORKFLOW, timeouts: { ...EMPTY_WORKFLOW.timeouts }, ...over });
const git = (repo: string, ...args: string[]) => run('git', args, repo);

const h = engineEachTest();

describe.each(USERS)('the workflow, agents as %s', (_name, user) => {
  const opts = (over: Partial<DispatchOptions>) => h.opts({ agentUser: user, ...over });
  const log = (runId: string, key: string) => readFileSync(logPath(runPaths(h.stateDir, runId), key), 'utf8');

  it("runs setup before the agent, as the agent's user, and the agent sees what it installed", async () => {
    const key = h.item('task', 'Uses a dependency');
    const setup = 'mkdir -p deps && echo "installed by $(id -u)" > deps/dep.txt';
    const agent = script(`cat deps/dep.txt\necho "agent is $(id -u)"\n${COMMIT} --allow-empty -m "$SVC_CARD_KEY: used it"`);
    const s = await runDispatch(opts({ keys: [key], agent: { agentCmd: agent }, workflow: wf({ setup: [setup] }) }), h.deps());
    expect(s.legs[0]).toMatchObject({ disposition: 'implemented', check: { status: 'none' }, attempts: 1 });
    const text = log(s.runId!, key);
    expect(text).toContain(`[svc] setup: ${setup}`);
    // Setup ran as the agent runs: the same uid (svc's own, or the leg's, never root then).
    const uid = /^agent is (\d+)$/m.exec(text)![1];
    if (user) expect(uid).not.toBe('0');
    else expect(uid).toBe(String(process.getuid?.()));
    expect(text).toContain(`installed by ${uid}`);
    expect(text.indexOf('[svc] setup: exit 0')).toBeLessThan(text.indexOf(`installed by ${uid}`));
  });

  it('fails the leg with "setup failed" before the agent starts, and still tears down', async () => {
    const key = h.item('task', 'Broken setup');
    const gate = mkdtempSync(join(tmpdir(), 'svc-wf-gate-'));
    chmodSync(gate, 0o777);
    const agent = script(`touch ${gate}/agent-ran\n${COMMIT} --allow-empty -m "$SVC_CARD_KEY: x"`);
    const s = await runDispatch(
      opts({ keys: [key], agent: { agentCmd: agent }, workflow: wf({ setup: ['echo cannot install >&2; exit 3'], teardown: [`touch ${gate}/torn-down`] }) }),
      h.deps(),
    );
    expect(s.legs[0]).toMatchObject({ disposition: 'failed', reason: 'setup failed (exit 3)', exitCode: null, attempts: 0 });
    expect(existsSync(join(gate, 'agent-ran'))).toBe(false);
    expect(existsSync(join(gate, 'torn-down'))).toBe(true);
    expect(log(s.runId!, key)).toContain('cannot install');
  });

  it("copies .env into the leg, and no commit carries it, not even the agent's `git add -A`", async () => {
    const key = h.item('task', 'Reads the config');
    writeFileSync(join(h.repo, '.env'), 'API_KEY=from-the-checkout\n', { mode: 0o600 });
    writeFileSync(join(h.repo, '.env.local'), 'LOCAL=1\n');
    const agent = script(`cat .env > seen.txt\ngit add -A\n${COMMIT} -m "$SVC_CARD_KEY: read it"`);
    const s = await runDispatch(opts({ keys: [key], agent: { agentCmd: agent }, workflow: wf({ copy: ['.env*'] }) }), h.deps());
    expect(s.legs[0]).toMatchObject({ disposition: 'implemented' });
    expect(await git(h.repo, 'show', `svc/${key}:seen.txt`)).toBe('API_KEY=from-the-checkout\n');
    const files = (await git(h.repo, 'ls-tree', '-r', '--name-only', `svc/${key}`)).split('\n');
    expect(files).toContain('seen.txt');
    expect(files.filter((f) => f.startsWith('.env'))).toEqual([]);
    // Nothing of the copy is left as work in svc's worktree either (a review or prune would judge it).
    const wt = (await git(h.repo, 'worktree', 'list', '--porcelain'))
      .split('\n')
      .find((l) => l.endsWith(`/${key}`))!
      .slice('worktree '.length);
    expect(await git(wt, 'status', '--porcelain', '--untracked-files=all')).toBe('');
    expect(readdirSync(wt)).not.toContain('.env');
    expect(readFileSync(join(h.repo, '.env'), 'utf8')).toBe('API_KEY=from-the-checkout\n');
    expect(log(s.runId!, key)).toMatch(/\[svc\] copied \.env\n/);
  });

  it('gives two parallel legs ports of their own', async () => {
    const a = h.item('task', 'Server A');
    const b = h.item('task', 'Server B');
    const gate = mkdtempSync(join(tmpdir(), 'svc-wf-gate-'));
    chmodSync(gate, 0o777);
    // Each agent waits (at most 20 s) until both are running, so the two legs hold their ports at once.
    const agent = script(
      [
        `touch ${gate}/$SVC_CARD_KEY`,
        `i=0; while [ "$(ls ${gate} | wc -l)" -lt 2 ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done`,
        'echo "$SVC_PORT $SVC_PORT_COUNT" > port.txt',
        'git add port.txt',
        `${COMMIT} -m "$SVC_CARD_KEY: port"`,
      ].join('\n'),
    );
    const s = await runDispatch(opts({ keys: [a, b], parallel: 2, agent: { agentCmd: agent }, workflow: wf({ ports: 3 }) }), h.deps());
    expect(s.legs.map((l) => l.disposition)).toEqual(['implemented', 'implemented']);
    const [pa, pb] = await Promise.all([a, b].map(async (k) => (await git(h.repo, 'show', `svc/${k}:port.txt`)).trim().split(' ').map(Number)));
    expect(pa![1]).toBe(3);
    expect(Math.abs(pa![0]! - pb![0]!)).toBeGreaterThanOrEqual(3);
    for (const p of [pa![0]!, pb![0]!]) expect(p >= PORT_RANGE.first && p + 3 <= PORT_RANGE.end).toBe(true);
  });

  it('fails a leg whose work fails the check: "verify failed (exit N)", its output in the log and the reports', async () => {
    const key = h.item('task', 'Breaks the build');
    const agent = script(`${COMMIT} --allow-empty -m "$SVC_CARD_KEY: broke it"`);
    const verify = 'echo "test suite: 1 failing (ok.txt missing)"; test -f ok.txt';
    const s = await runDispatch(opts({ keys: [key], agent: { agentCmd: agent }, workflow: wf({ verify }) }), h.deps());
    expect(s).toMatchObject({ status: 'failed', exitCode: 1 });
    expect(s.legs[0]).toMatchObject({
      disposition: 'failed',
      reason: 'verify failed (exit 1)',
      exitCode: 0,
      attempts: 1,
      check: { status: 'failed', command: verify, exitCode: 1, output: 'test suite: 1 failing (ok.txt missing)' },
    });
    expect(log(s.runId!, key)).toContain('[svc] verify: exit 1');

    const report = await buildRunReport(h.stateDir, s.runId!, { secrets: [] });
    expect(report.legs[0]!.check).toMatchObject({ status: 'failed', exitCode: 1 });
    const junit = renderJunit([report]);
    expect(junit).toMatch(/<failure message="verify failed \(exit 1\)" type="check"[^>]*>[^<]*test suite: 1 failing/);
    expect(renderMarkdown([report])).toMatch(/\| ❌ failed \| ❌ failed \|/);
    expect(renderMarkdown([report])).toContain('test suite: 1 failing');
    expect(renderHtml([report])).toContain('<pre class="check">test suite: 1 failing');
  });

  it("starts the agent again with the check's output; fixed on the second attempt it is implemented, spend added up", async () => {
    const key = h.item('task', 'Fixed on the second try');
    const result = JSON.stringify({ type: 'result', subtype: 'success', is_error: false, result: 'done', total_cost_usd: 0.25 });
    const agent = script(
      [
        'if grep -q "The check failed (attempt 2 of 3)" "$SVC_PROMPT_FILE" && grep -q "^ok.txt is missing" "$SVC_PROMPT_FILE"; then echo fixed > ok.txt; git add ok.txt; fi',
        `${COMMIT} --allow-empty -m "$SVC_CARD_KEY: attempt"`,
        `echo '${result}'`,
      ].join('\n'),
    );
    const verify = 'test -f ok.txt || { echo "ok.txt is missing"; exit 1; }';
    const s = await runDispatch(
      opts({ keys: [key], agent: { agentCmd: agent, stream: 'claude-stream-json' }, workflow: wf({ verify, verifyAttempts: 2 }) }),
      h.deps(),
    );
    expect(s.legs[0]).toMatchObject({ disposition: 'implemented', attempts: 2, costUsd: 0.5, check: { status: 'passed', exitCode: 0 } });
    expect(await git(h.repo, 'log', '--format=%s', `svc/${key}`, '-2')).toBe(`${key}: attempt\n${key}: attempt\n`);
    // Each attempt is an event: the leg went `running` twice before it ended.
    const events = readFileSync(runPaths(h.stateDir, s.runId!).journal, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .filter((r) => r.t === 'ev' && r.ev.workItemKey === key)
      .map((r) => r.ev.disposition);
    expect(events).toEqual(['running', 'running', 'implemented']);
    expect(log(s.runId!, key)).toContain('[svc] attempt 2 of 3');
    const report = await buildRunReport(h.stateDir, s.runId!, { secrets: [] });
    expect(report.legs[0]).toMatchObject({ attempts: 2, check: { status: 'passed' } });
  });
});

describe("the workflow's steps and what leaves the machine", () => {
  const journal = (runId: string) =>
    readFileSync(runPaths(h.stateDir, runId).journal, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .filter((r) => r.t === 'ev')
      .map((r) => r.ev);

  it("steps get the agent's environment without svc's credentials; their output is redacted, and sent only with --send-logs", async () => {
    const key = h.item('task', 'Prints its environment');
    const setup = 'env | sort; echo ghp_0123456789abcdefghijklmnopqrstuvwxyzAB';
    const env = { PATH: process.env.PATH, SVC_TOKEN: 'plain-service-credential', GITHUB_TOKEN: 'plain-github-credential', KEEP_ME: 'kept' };
    const quiet = await runDispatch(h.opts({ keys: [key], env, workflow: wf({ setup: [setup], env: ['KEEP_ME'] }) }), h.deps());
    const text = readFileSync(logPath(runPaths(h.stateDir, quiet.runId!), key), 'utf8');
    expect(text).toContain('KEEP_ME=kept');
    expect(text).toContain(`SVC_CARD_KEY=${key}`);
    expect(text).not.toContain('plain-service-credential');
    expect(text).not.toContain('plain-github-credential');
    expect(text).not.toContain('ghp_0123456789abcdefghijklmnopqrstuvwxyzAB');
    expect(journal(quiet.runId!).filter((e) => e.body !== undefined)).toEqual([]);

    const key2 = h.item('task', 'Prints, with --send-logs');
    const sent = await runDispatch(h.opts({ keys: [key2], env, agentEnv: ['KEEP_ME'], sendLogs: true, workflow: wf({ setup: [setup] }) }), h.deps());
    const bodies = journal(sent.runId!)
      .map((e) => e.body ?? '')
      .join('');
    expect(bodies).toContain('[svc] setup: env | sort');
    expect(bodies).toContain('KEEP_ME=kept');
    expect(bodies).not.toContain('ghp_0123456789abcdefghijklmnopqrstuvwxyzAB');
  });

  it('tears down after an interrupted leg', async () => {
    const key = h.item('task', 'Interrupted');
    const gate = mkdtempSync(join(tmpdir(), 'svc-wf-gate-'));
    const agent = script(`touch ${gate}/started\nsleep 30`);
    const controller = new AbortController();
    const running = runDispatch(
      h.opts({ keys: [key], agent: { agentCmd: agent }, workflow: wf({ verify: 'true', teardown: [`touch ${gate}/torn-down`] }) }),
      h.deps({ signal: controller.signal }),
    );
    await expect.poll(() => existsSync(join(gate, 'started')), { timeout: 20_000 }).toBe(true);
    controller.abort();
    const s = await running;
    expect(s.legs[0]).toMatchObject({ disposition: 'failed', reason: 'interrupted', check: { status: 'none' } });
    expect(existsSync(join(gate, 'torn-down'))).toBe(true);
  });
});
