// `protect:` (docs/workflow.md): paths the agent must leave as the base commit has them. A leg that
// changed one, committed or not, ends failed with the paths in its reason; .svc/workflow.yml is
// protected whether or not the repository has a workflow. With svc's own user and, as root,
// through the default pool.
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_POOL, type AgentPoolSpec } from '../../../src/dispatch/boundary/user.js';
import { runDispatch } from '../../../src/dispatch/lifecycle/dispatch.js';
import { buildRunReport } from '../../../src/dispatch/report/model.js';
import { renderMarkdown } from '../../../src/dispatch/report/markdown.js';
import { parseWorkflow } from '../../../src/dispatch/workflow/parse.js';
import { EMPTY_WORKFLOW, type Workflow } from '../../../src/dispatch/workflow/policy.js';
import { run } from '../../support/cli.js';
import { startHarness, type Harness } from '../../support/engine.js';

const COMMIT = 'git -c user.name=agent -c user.email=agent@example.invalid commit -q';
const USERS: [string, AgentPoolSpec | null][] = [
  ['svc’s own user', null],
  ...(process.getuid?.() === 0 ? [['the default pool', DEFAULT_POOL] as [string, AgentPoolSpec]] : []),
];

function script(body: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-protect-agent-'));
  chmodSync(dir, 0o755);
  writeFileSync(join(dir, 'agent.sh'), `set -e\n${body}\n`, { mode: 0o755 });
  return `sh ${join(dir, 'agent.sh')}`;
}

const wf = (over: Partial<Workflow>): Workflow => ({ ...EMPTY_WORKFLOW, timeouts: { ...EMPTY_WORKFLOW.timeouts }, ...over });

let h: Harness;
beforeEach(async () => {
  h = await startHarness();
  mkdirSync(join(h.repo, 'ci'), { recursive: true });
  writeFileSync(join(h.repo, 'check.sh'), 'exit 1\n');
  writeFileSync(join(h.repo, 'ci', 'pipeline.yml'), 'steps: []\n');
  await run('git', ['add', '.'], h.repo);
  await run('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.invalid', 'commit', '-qm', 'check'], h.repo);
});
afterEach(async () => {
  await h.close();
});

describe.each(USERS)('protected paths, agents as %s', (_name, agentUser) => {
  it('a leg that rewrote the check and a CI file fails, naming them, and the report shows it', async () => {
    const key = h.item('task', 'Make the check pass');
    const agent = script(
      ['echo "exit 0" > check.sh', 'echo "steps: [deploy]" > ci/pipeline.yml', 'echo ok > work.txt', 'git add -A', `${COMMIT} -m "$SVC_CARD_KEY: pass"`].join(
        '\n',
      ),
    );
    const s = await runDispatch(
      h.opts({ keys: [key], agentUser, agent: { agentCmd: agent }, workflow: wf({ verify: 'sh check.sh', protect: ['check.sh', 'ci/**'] }) }),
      h.deps(),
    );
    expect(s.legs[0]).toMatchObject({ disposition: 'failed', reason: 'changed a protected path: check.sh, ci/pipeline.yml' });
    expect(renderMarkdown([await buildRunReport(h.stateDir, s.runId!, { secrets: [] })])).toContain('changed a protected path: check.sh, ci/pipeline.yml');
    // The work stays on its branch, for a person to look at.
    expect(await run('git', ['show', `svc/${key}:check.sh`], h.repo)).toBe('exit 0\n');
  });

  it('an uncommitted change to a protected path counts too', async () => {
    const key = h.item('task', 'Touches the check');
    const agent = script(['echo ok > work.txt', 'git add work.txt', `${COMMIT} -m "$SVC_CARD_KEY: work"`, 'echo "exit 0" > check.sh'].join('\n'));
    const s = await runDispatch(h.opts({ keys: [key], agentUser, agent: { agentCmd: agent }, workflow: wf({ protect: ['check.sh'] }) }), h.deps());
    expect(s.legs[0]).toMatchObject({ disposition: 'failed', reason: 'changed a protected path: check.sh' });
  });

  it('a change committed and then put back only in the working tree counts: the commit is what would land', async () => {
    const key = h.item('task', 'Hides its change');
    const agent = script(
      ['echo "exit 0" > check.sh', 'echo ok > work.txt', 'git add -A', `${COMMIT} -m "$SVC_CARD_KEY: pass"`, 'git show HEAD~1:check.sh > check.sh'].join('\n'),
    );
    const s = await runDispatch(h.opts({ keys: [key], agentUser, agent: { agentCmd: agent }, workflow: wf({ protect: ['check.sh'] }) }), h.deps());
    expect(s.legs[0]).toMatchObject({ disposition: 'failed', reason: 'changed a protected path: check.sh' });
    expect(await run('git', ['show', `svc/${key}:check.sh`], h.repo)).toBe('exit 0\n');
  });

  it('a new file left uncommitted where the base has no such folder counts too (.svc/, a glob of a new folder)', async () => {
    const [a, b] = [h.item('task', 'Leaves rules'), h.item('task', 'Leaves a deploy script')];
    const agent = script(
      [
        'echo ok > "work-$SVC_CARD_KEY.txt"',
        'git add -A',
        `${COMMIT} -m "$SVC_CARD_KEY: work"`,
        'if [ "$SVC_CARD_KEY" = "' + a + '" ]; then mkdir -p .svc && echo "setup: [evil]" > .svc/workflow.yml; fi',
        'if [ "$SVC_CARD_KEY" = "' + b + '" ]; then mkdir -p deploy/prod && echo "rm -rf /" > deploy/prod/run.sh; fi',
      ].join('\n'),
    );
    const s = await runDispatch(
      h.opts({ keys: [a, b], agentUser, onFailure: 'continue', agent: { agentCmd: agent }, workflow: wf({ protect: ['deploy/*/run.sh'] }) }),
      h.deps(),
    );
    expect(s.legs.map((l) => [l.key, l.disposition, l.reason])).toEqual([
      [a, 'failed', 'changed a protected path: .svc/workflow.yml'],
      [b, 'failed', 'changed a protected path: deploy/prod/run.sh'],
    ]);
  });

  it('.svc/workflow.yml is protected without a workflow; other changes pass', async () => {
    const [a, b] = [h.item('task', 'Writes rules'), h.item('task', 'Plain work')];
    const agent = script(
      [
        'if [ "$SVC_CARD_KEY" = "' + a + '" ]; then mkdir -p .svc && echo "setup: [evil]" > .svc/workflow.yml; fi',
        'echo ok > "work-$SVC_CARD_KEY.txt"',
        'git add -A',
        `${COMMIT} -m "$SVC_CARD_KEY: work"`,
      ].join('\n'),
    );
    const s = await runDispatch(h.opts({ keys: [a, b], agentUser, onFailure: 'continue', agent: { agentCmd: agent } }), h.deps());
    expect(s.legs.map((l) => [l.key, l.disposition, l.reason])).toEqual([
      [a, 'failed', 'changed a protected path: .svc/workflow.yml'],
      [b, 'implemented', null],
    ]);
  });
});

it('the file takes protect: as globs, relative to the repository', () => {
  expect(parseWorkflow('protect: ["check.sh", "ci/**"]\n').workflow?.protect).toEqual(['check.sh', 'ci/**']);
  expect(parseWorkflow('protect: "/etc/passwd"\n').problems).toEqual([
    { line: 1, message: "protect: '/etc/passwd' is absolute; globs are relative to the repository's root" },
  ]);
});
