// The check decides on the work that comes back (docs/workflow.md, "The check"), as root through
// the default pool: a server the agent left running cannot answer the check, and a commit the
// leg's uid makes after the check never reaches the branch.
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_POOL } from '../../../src/dispatch/boundary/user.js';
import { runDispatch } from '../../../src/dispatch/lifecycle/dispatch.js';
import { EMPTY_WORKFLOW, type Workflow } from '../../../src/dispatch/workflow/policy.js';
import { run } from '../../support/cli.js';
import { engineEachTest } from '../../support/engine.js';

const COMMIT = 'git -c user.name=agent -c user.email=agent@example.invalid commit -q';

function script(body: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-check-agent-'));
  chmodSync(dir, 0o755);
  writeFileSync(join(dir, 'agent.sh'), `set -e\n${body}\n`, { mode: 0o755 });
  return `sh ${join(dir, 'agent.sh')}`;
}

/** A commit made after the check, as the leg's uid, in its clone. */
const AFTER_CHECK = 'echo bad > evil.txt && git add evil.txt && git -c user.name=x -c user.email=x@example.invalid commit -qm after-check';

const wf = (over: Partial<Workflow>): Workflow => ({ ...EMPTY_WORKFLOW, timeouts: { ...EMPTY_WORKFLOW.timeouts }, ...over });

const h = engineEachTest();

describe.skipIf(process.getuid?.() !== 0)('the check, as root through the default pool', () => {
  it('is not answered by a server the agent left behind', async () => {
    const key = h.item('task', 'Make the check pass');
    // The agent cannot make `pass` stay, so it leaves a detached process that keeps making it.
    const agent = script(
      ['setsid sh -c "while :; do touch pass; sleep 0.02; done" </dev/null >/dev/null 2>&1 &', `${COMMIT} --allow-empty -m "$SVC_CARD_KEY: cheat"`].join('\n'),
    );
    const verify = 'rm -f pass; sleep 0.4; test -f pass';
    const s = await runDispatch(h.opts({ keys: [key], agentUser: DEFAULT_POOL, agent: { agentCmd: agent }, workflow: wf({ verify }) }), h.deps());
    expect(s.legs[0]).toMatchObject({ disposition: 'failed', reason: 'verify failed (exit 1)', check: { status: 'failed' } });
  });

  it('collects the commit the check ran on, whatever is committed after it', async () => {
    const key = h.item('task', 'Good work');
    const agent = script(['echo good > good.txt', 'git add good.txt', `${COMMIT} -m "$SVC_CARD_KEY: good"`].join('\n'));
    // After the check the uid still runs the teardown, in the same clone: what it commits there
    // (a failing script restored, a file added) must not become svc/KEY.
    const s = await runDispatch(
      h.opts({ keys: [key], agentUser: DEFAULT_POOL, agent: { agentCmd: agent }, workflow: wf({ verify: 'test -f good.txt', teardown: [AFTER_CHECK] }) }),
      h.deps(),
    );
    expect(s.legs[0]).toMatchObject({ disposition: 'implemented', check: { status: 'passed' } });
    expect(await run('git', ['log', '-1', '--format=%s', `svc/${key}`], h.repo)).toBe(`${key}: good\n`);
    expect(await run('git', ['ls-tree', '--name-only', `svc/${key}`], h.repo)).not.toContain('evil.txt');
    expect(h.seen.filter((l) => l.includes('after the check'))).toEqual([
      expect.stringMatching(
        new RegExp(`^warn ${key}: something committed after the check; svc/${key} stays at the checked commit [0-9a-f]{12} and it is not collected$`),
      ),
    ]);
  });
});
