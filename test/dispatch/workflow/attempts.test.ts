// Best-of-N (src/dispatch/lifecycle/attempts.ts) against the real local service and real worktrees,
// once with agents as svc's own user and, as root, as the default agent users (a uid and a clone per
// attempt): N attempts of a card side by side, the repository's check picking the winner, whose
// commit becomes svc/<KEY>, the others kept on svc/<KEY>-attempt-<n>, and the report listing them all.
import { chmodSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_POOL, type AgentPoolSpec } from '../../../src/dispatch/boundary/user.js';
import { runDispatch } from '../../../src/dispatch/lifecycle/dispatch.js';
import { Interrupted } from '../../../src/dispatch/signals.js';
import type { DispatchOptions } from '../../../src/dispatch/lifecycle/types.js';
import { buildRunReport } from '../../../src/dispatch/report/model.js';
import { renderHtml } from '../../../src/dispatch/report/html.js';
import { renderJunit } from '../../../src/dispatch/report/junit.js';
import { renderMarkdown } from '../../../src/dispatch/report/markdown.js';
import { logPath, runPaths } from '../../../src/dispatch/state/folder.js';
import { EMPTY_WORKFLOW, type Workflow } from '../../../src/dispatch/workflow/policy.js';
import { run } from '../../support/cli.js';
import { pushToOrigin } from '../../../src/dispatch/git/delivery.js';
import { copyRepoWithOrigin, refOf } from '../../support/git-remote.js';
import { startHarness, type Harness } from '../../support/engine.js';

const isRoot = process.getuid?.() === 0;
const USERS: [string, AgentPoolSpec | null][] = [
  ['--agent-user none', null],
  ...(isRoot ? [['the default agent users (a uid per attempt)', DEFAULT_POOL] as [string, AgentPoolSpec]] : []),
];

const COMMIT = 'git -c user.name=agent -c user.email=agent@example.invalid commit -q';

/** A folder every user may read (agents of another user run what is in it). */
function openDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-attempts-'));
  chmodSync(dir, 0o755);
  return dir;
}

/** A folder every agent user may leave marks in (sticky, as /tmp). */
function markDir(): string {
  const dir = openDir();
  chmodSync(dir, 0o1777);
  return dir;
}

/** Shell that waits (30 s at most) until every one of `names` is in `dir`. */
const waitForMarks = (dir: string, names: string[]) =>
  `i=0; while [ $i -lt 600 ] && ! { ${names.map((n) => `[ -e ${dir}/${n} ]`).join(' && ')}; }; do sleep 0.05; i=$((i+1)); done`;

function script(body: string): string {
  const file = join(openDir(), 'agent.sh');
  writeFileSync(file, `set -e\n${body}\n`, { mode: 0o755 });
  return `sh ${file}`;
}

const wf = (over: Partial<Workflow>): Workflow => ({ ...EMPTY_WORKFLOW, timeouts: { ...EMPTY_WORKFLOW.timeouts }, ...over });
const git = async (repo: string, ...args: string[]) => (await run('git', args, repo)).trim();
const branches = async (repo: string) => (await git(repo, 'for-each-ref', '--format=%(refname:short)', 'refs/heads/svc/')).split('\n').filter(Boolean);

let h: Harness;
beforeEach(async () => {
  h = await startHarness();
});
afterEach(async () => {
  await h.close();
});

describe.each(USERS)('best of N, agents as %s', (_name, user) => {
  const opts = (over: Partial<DispatchOptions>) => h.opts({ agentUser: user, ...over });

  it('puts the one attempt that passes the check on svc/KEY and keeps the others on their own branches', async () => {
    const key = h.item('task', 'Only the second attempt gets it right');
    // Each attempt writes its number; the check passes only for 2. Attempt 3 takes its time, so it
    // is still running when 2 has won and is stopped.
    const marks = markDir();
    const agent = script(
      [
        // Attempt 2 commits only once attempt 1 has failed its check (the check leaves a mark as it
        // fails), so 1 is failed, not stopped, when 2 wins; waited for, not slept on.
        `if [ "$SVC_ATTEMPT" = 2 ]; then ${waitForMarks(marks, ['failed-1'])}; fi`,
        'echo "$SVC_ATTEMPT" > attempt.txt',
        'git add attempt.txt',
        `${COMMIT} -m "$SVC_CARD_KEY: attempt $SVC_ATTEMPT"`,
        'if [ "$SVC_ATTEMPT" = 3 ]; then sleep 20; fi',
      ].join('\n'),
    );
    const s = await runDispatch(
      opts({
        keys: [key],
        agent: { agentCmd: agent },
        attempts: 3,
        parallel: 3,
        workflow: wf({ verify: `test "$(cat attempt.txt)" = 2 || { touch ${marks}/failed-$(cat attempt.txt); exit 1; }` }),
      }),
      h.deps(),
    );
    const leg = s.legs[0]!;
    expect(leg).toMatchObject({ disposition: 'implemented', sessionBranch: `svc/${key}`, check: { status: 'passed' } });
    expect(await git(h.repo, 'show', `svc/${key}:attempt.txt`)).toBe('2');
    expect(leg.bestOf?.winner).toBe(2);
    expect(leg.bestOf?.why).toMatch(/^attempt 2 won: the first to pass the check/);
    const [one, two, three] = leg.bestOf!.attempts;
    expect(two).toMatchObject({ attempt: 2, disposition: 'implemented', check: 'passed', branch: `svc/${key}-attempt-2` });
    expect(one).toMatchObject({ attempt: 1, disposition: 'failed', check: 'failed', reason: 'verify failed (exit 1)', branch: `svc/${key}-attempt-1` });
    expect(three).toMatchObject({ attempt: 3, disposition: 'stopped', reason: 'stopped: attempt 2 won' });
    // Stopped, not waited for: well under attempt 3's 20 s.
    expect(leg.durationMs).toBeLessThan(15_000);
    expect(await branches(h.repo)).toEqual(expect.arrayContaining([`svc/${key}`, `svc/${key}-attempt-1`, `svc/${key}-attempt-2`, `svc/${key}-attempt-3`]));
    expect(await git(h.repo, 'show', `svc/${key}-attempt-1:attempt.txt`)).toBe('1');
    // The service saw one leg of the card, implemented on svc/KEY.
    const card = (await h.service.getDispatchRun(s.runId!)).cards.find((c) => c.workItemKey === key);
    expect(card).toMatchObject({ disposition: 'implemented', sessionBranch: `svc/${key}` });
    // The card's log says where each attempt ran and who won; the report lists all three.
    const log = readFileSync(logPath(runPaths(h.stateDir, s.runId!), key), 'utf8');
    expect(log).toContain(`[svc] attempt 2 won: the first to pass the check`);
    const report = await buildRunReport(h.stateDir, s.runId!, { secrets: [] });
    expect(report.legs[0]!.bestOf?.attempts.map((a) => [a.attempt, a.disposition])).toEqual([
      [1, 'failed'],
      [2, 'implemented'],
      [3, 'stopped'],
    ]);
    expect(renderJunit([report])).toContain(`attempt 3 (command): stopped, check none`);
    expect(renderHtml([report])).toMatch(new RegExp(`<table class="attempts">.*<code>svc/${key}-attempt-2</code>`));
    const md = renderMarkdown([report]);
    expect(md).toContain(`attempt 2 won: the first to pass the check`);
    expect(md).toMatch(new RegExp(`\\| 1 \\| command \\| \`svc/${key}-attempt-1\` \\| failed`));
  });
});

describe('best of N', () => {
  // As root, through the default agent users: a uid and a clone per attempt.
  const pool = isRoot ? DEFAULT_POOL : null;
  it('hands each attempt the preset of its --agent, cycling, and adds up their spend', async () => {
    const key = h.item('task', 'Two agents');
    const bin = openDir();
    // Stand-ins for the presets: each records who it is and which attempt; claude reports spend.
    const result = '{"type":"result","subtype":"success","is_error":false,"result":"done","total_cost_usd":0.25}';
    for (const [name, extra] of [
      ['claude', `echo '${result}'`],
      ['codex', ''],
    ] as const) {
      writeFileSync(
        join(bin, name),
        `#!/bin/sh\nset -e\ncat > /dev/null\necho "${name} $SVC_ATTEMPT" > who.txt\ngit add who.txt\n${COMMIT} -m "$SVC_CARD_KEY: ${name}"\n${extra}\n`,
        { mode: 0o755 },
      );
    }
    const s = await runDispatch(
      h.opts({
        agentUser: pool,
        keys: [key],
        agent: { agent: 'claude' },
        agents: [{ agent: 'claude' }, { agent: 'codex' }],
        attempts: 3,
        parallel: 3,
        allAttempts: true,
        env: { ...process.env, PATH: `${bin}:${process.env.PATH}` },
        workflow: wf({ verify: 'test -f who.txt' }),
      }),
      h.deps(),
    );
    const leg = s.legs[0]!;
    expect(leg.disposition).toBe('implemented');
    expect(leg.bestOf?.attempts.map((a) => [a.agent, a.disposition])).toEqual([
      ['claude', 'implemented'],
      ['codex', 'implemented'],
      ['claude', 'implemented'],
    ]);
    for (const [n, who] of [
      [1, 'claude 1'],
      [2, 'codex 2'],
      [3, 'claude 3'],
    ] as const)
      expect(await git(h.repo, 'show', `svc/${key}-attempt-${n}:who.txt`)).toBe(who);
    // --all-attempts: every attempt ran to its end; the spend of both claude attempts adds up.
    expect(leg.costUsd).toBeCloseTo(0.5);
    expect(await git(h.repo, 'show', `svc/${key}:who.txt`)).toBe(await git(h.repo, 'show', `svc/${key}-attempt-${leg.bestOf!.winner}:who.txt`));
  });

  it('fails the leg when no attempt passes, and keeps what was on svc/KEY', async () => {
    const key = h.item('task', 'Nobody gets it');
    const agent = script(`echo "$SVC_ATTEMPT" > attempt.txt\ngit add attempt.txt\n${COMMIT} -m "$SVC_CARD_KEY: attempt $SVC_ATTEMPT"`);
    const s = await runDispatch(
      h.opts({ agentUser: pool, keys: [key], agent: { agentCmd: agent }, attempts: 2, parallel: 2, workflow: wf({ verify: 'exit 4' }) }),
      h.deps(),
    );
    const leg = s.legs[0]!;
    expect(leg).toMatchObject({ disposition: 'failed', check: { status: 'failed' } });
    expect(leg.reason).toBe('no attempt passed (1: verify failed (exit 4); 2: verify failed (exit 4))');
    expect(leg.bestOf).toMatchObject({ winner: null, why: 'no attempt of 2 passed the check' });
    // svc/KEY is still the base: no attempt's work reached it.
    expect(await git(h.repo, 'rev-parse', `svc/${key}`)).toBe(await git(h.repo, 'rev-parse', 'HEAD'));
  });

  it('pushes the winner as svc/KEY, and the other attempts only with --push-attempts', async () => {
    await h.close();
    const { repo, origin } = await copyRepoWithOrigin();
    h = await startHarness({ repo });
    const agent = script(`echo "$SVC_ATTEMPT" > attempt.txt\ngit add attempt.txt\n${COMMIT} -m "$SVC_CARD_KEY: attempt $SVC_ATTEMPT"`);
    const workflow = wf({ verify: 'test "$(cat attempt.txt)" = 1' });
    const pushed: string[] = [];
    const deps = () => h.deps({ pushBranch: async (r, b) => (pushed.push(b), pushToOrigin(r, b)) });
    const plain = h.item('task', 'Pushed without its attempts');
    const one = await runDispatch(
      h.opts({ agentUser: pool, keys: [plain], agent: { agentCmd: agent }, attempts: 2, parallel: 2, allAttempts: true, push: true, workflow }),
      deps(),
    );
    expect(one.legs[0]).toMatchObject({ disposition: 'implemented', bestOf: { winner: 1 } });
    expect(pushed).toEqual([`svc/${plain}`]);
    const all = h.item('task', 'Pushed with its attempts');
    const two = await runDispatch(
      h.opts({
        agentUser: pool,
        keys: [all],
        agent: { agentCmd: agent },
        attempts: 2,
        parallel: 2,
        allAttempts: true,
        push: true,
        pushAttempts: true,
        workflow,
      }),
      deps(),
    );
    expect(two.legs[0]).toMatchObject({ disposition: 'implemented', bestOf: { winner: 1 } });
    expect(pushed.slice(1).sort()).toEqual([`svc/${all}`, `svc/${all}-attempt-2`]);
    expect(await refOf(origin, `refs/heads/svc/${all}-attempt-2`)).toBe(await refOf(h.repo, `svc/${all}-attempt-2`));
    expect(await refOf(origin, `refs/heads/svc/${plain}-attempt-2`)).toBeNull();
    expect(await git(origin, 'show', `svc/${all}:attempt.txt`)).toBe('1');
  });

  it('keeps the commits svc/KEY had that the winner lacks on a side ref, and says so', async () => {
    const key = h.item('task', 'Had work of its own');
    await git(h.repo, 'branch', `svc/${key}`);
    const wt = mkdtempSync(join(tmpdir(), 'svc-attempts-old-'));
    await git(h.repo, 'worktree', 'add', '-q', `${wt}/w`, `svc/${key}`);
    await git(`${wt}/w`, ...COMMIT.split(' ').slice(1), '--allow-empty', '-m', `${key}: earlier work`);
    const earlier = await git(h.repo, 'rev-parse', `svc/${key}`);
    await git(h.repo, 'worktree', 'remove', `${wt}/w`);
    const agent = script(`echo "$SVC_ATTEMPT" > attempt.txt\ngit add attempt.txt\n${COMMIT} -m "$SVC_CARD_KEY: attempt $SVC_ATTEMPT"`);
    const s = await runDispatch(
      h.opts({ agentUser: pool, keys: [key], agent: { agentCmd: agent }, attempts: 2, parallel: 2, workflow: wf({ verify: 'test "$(cat attempt.txt)" = 2' }) }),
      h.deps(),
    );
    expect(s.legs[0]).toMatchObject({ disposition: 'implemented', bestOf: { winner: 2 } });
    expect(await git(h.repo, 'rev-parse', `svc/${key}`)).toBe(await git(h.repo, 'rev-parse', `svc/${key}-attempt-2`));
    expect(await git(h.repo, 'rev-parse', `refs/svc/before-attempts/${key}`)).toBe(earlier);
    expect(h.seen.join('\n')).toContain(`${key}: svc/${key} had commits attempt 2's lacks; kept on refs/svc/before-attempts/${key}`);
  });

  it('--max-cost counts the spend of every attempt: no new card once two attempts of one reached it', async () => {
    const bin = openDir();
    const result = '{"type":"result","subtype":"success","is_error":false,"result":"done","total_cost_usd":0.25}';
    writeFileSync(join(bin, 'claude'), `#!/bin/sh\ncat > /dev/null\n${COMMIT} --allow-empty -m "$SVC_CARD_KEY: x"\necho '${result}'\n`, { mode: 0o755 });
    const a = h.item('task', 'Spends');
    const b = h.item('task', 'Never started');
    const s = await runDispatch(
      h.opts({
        agentUser: pool,
        keys: [a, b],
        agent: { agent: 'claude' },
        attempts: 2,
        parallel: 2,
        allAttempts: true,
        maxCostUsd: 0.4,
        env: { ...process.env, PATH: `${bin}:${process.env.PATH}` },
        workflow: wf({ verify: 'true' }),
      }),
      h.deps(),
    );
    expect(s.stopReason).toBe('max');
    expect(s.legs.map((l) => [l.key, l.costUsd])).toEqual([[a, 0.5]]);
  });

  it("says which attempt won in the leg's events with --send-logs", async () => {
    const key = h.item('task', 'Told to the service');
    const agent = script(`echo "$SVC_ATTEMPT" > attempt.txt\ngit add attempt.txt\n${COMMIT} -m "$SVC_CARD_KEY: attempt $SVC_ATTEMPT"`);
    const s = await runDispatch(
      h.opts({
        agentUser: pool,
        keys: [key],
        agent: { agentCmd: agent },
        attempts: 2,
        parallel: 2,
        sendLogs: true,
        workflow: wf({ verify: 'test "$(cat attempt.txt)" = 2' }),
      }),
      h.deps(),
    );
    const events = readFileSync(runPaths(h.stateDir, s.runId!).journal, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { t: string; ev?: { workItemKey?: string; body?: string } })
      .filter((r) => r.t === 'ev' && r.ev?.workItemKey === key && r.ev.body?.includes(' won: '));
    expect(events.map((e) => e.ev!.body)).toEqual([expect.stringMatching(new RegExp(`^${key}: attempt 2 won: the first to pass the check`))]);
  });

  it('with one slot, runs the attempts one after another and starts none once one won', async () => {
    const key = h.item('task', 'One slot');
    const ran = openDir();
    chmodSync(ran, 0o777);
    const agent = script(
      `touch ${ran}/$SVC_ATTEMPT\necho "$SVC_ATTEMPT" > attempt.txt\ngit add attempt.txt\n${COMMIT} -m "$SVC_CARD_KEY: attempt $SVC_ATTEMPT"`,
    );
    const s = await runDispatch(
      h.opts({ agentUser: pool, keys: [key], agent: { agentCmd: agent }, attempts: 3, parallel: 1, workflow: wf({ verify: 'test "$(cat attempt.txt)" = 2' }) }),
      h.deps(),
    );
    expect(s.legs[0]!.bestOf?.attempts.map((a) => [a.attempt, a.disposition, a.reason])).toEqual([
      [1, 'failed', 'verify failed (exit 1)'],
      [2, 'implemented', null],
      [3, 'stopped', 'not started: attempt 2 won'],
    ]);
    expect(readdirSync(ran).sort()).toEqual(['1', '2']);
    expect(await branches(h.repo)).not.toContain(`svc/${key}-attempt-3`);
  });

  it('between attempts that pass at the same moment, picks the smallest diff', async () => {
    const key = h.item('task', 'Three at once');
    // Attempt 1 writes 3 lines, 2 writes 1, 3 writes 2; all pass. The smallest is the last to end:
    // it commits once the other two have (each leaves a mark when it has committed).
    const marks = markDir();
    const agent = script(
      `case $SVC_ATTEMPT in 1) n=3;; 2) n=1; ${waitForMarks(marks, ['1', '3'])};; *) n=2;; esac\nseq $n > lines.txt\ngit add lines.txt\n${COMMIT} -m "$SVC_CARD_KEY: $n lines"\ntouch ${marks}/$SVC_ATTEMPT`,
    );
    // One instant for the whole run: every attempt ends "at the same moment".
    const s = await runDispatch(
      h.opts({ agentUser: pool, keys: [key], agent: { agentCmd: agent }, attempts: 3, parallel: 3, allAttempts: true, workflow: wf({ verify: 'true' }) }),
      h.deps({ clock: { now: () => 1_000_000 } }),
    );
    const leg = s.legs[0]!;
    expect(leg.bestOf?.attempts.map((a) => [a.attempt, a.disposition, a.diffLines])).toEqual([
      [1, 'implemented', 3],
      [2, 'implemented', 1],
      [3, 'implemented', 2],
    ]);
    expect(leg.bestOf?.winner).toBe(2);
    expect(leg.bestOf?.why).toMatch(/passed at the same moment, its diff is the smallest \(1 lines\)$/);
    expect(await git(h.repo, 'show', `svc/${key}:lines.txt`)).toBe('1');
  });

  it('does not let an attempt that changed a protected path win, though it passed the check first', async () => {
    const key = h.item('task', 'One cheats');
    const agent = script(
      [
        'if [ "$SVC_ATTEMPT" = 1 ]; then mkdir -p .svc && echo "verify: \\"true\\"" > .svc/workflow.yml && git add .svc; else sleep 1; echo ok > ok.txt && git add ok.txt; fi',
        `${COMMIT} -m "$SVC_CARD_KEY: attempt $SVC_ATTEMPT"`,
      ].join('\n'),
    );
    const s = await runDispatch(
      h.opts({ agentUser: pool, keys: [key], agent: { agentCmd: agent }, attempts: 2, parallel: 2, workflow: wf({ verify: 'true' }) }),
      h.deps(),
    );
    const leg = s.legs[0]!;
    expect(leg.bestOf?.attempts.map((a) => [a.attempt, a.disposition, a.check, a.reason])).toEqual([
      [1, 'failed', 'passed', 'changed a protected path: .svc/workflow.yml'],
      [2, 'implemented', 'passed', null],
    ]);
    expect(leg).toMatchObject({ disposition: 'implemented', bestOf: { winner: 2 } });
    expect(await git(h.repo, 'show', `svc/${key}:ok.txt`)).toBe('ok');
  });

  it('fails the leg, running no agent, when the engine is handed attempts without a check', async () => {
    const key = h.item('task', 'No check');
    const ran = openDir();
    chmodSync(ran, 0o777);
    const s = await runDispatch(
      h.opts({ agentUser: pool, keys: [key], agent: { agentCmd: script(`touch ${ran}/ran`) }, attempts: 2, workflow: wf({}) }),
      h.deps(),
    );
    expect(s.legs[0]).toMatchObject({
      disposition: 'failed',
      reason: 'no check to pick one of 2 attempts: set verify in .svc/workflow.yml or pass --verify CMD',
    });
    expect(readdirSync(ran)).toEqual([]);
  });

  it("puts what was left uncommitted in the card's worktree on the stash before the winner's commit", async () => {
    const key = h.item('task', 'Left files behind');
    const wt = join(mkdtempSync(join(tmpdir(), 'svc-attempts-left-')), 'w');
    await git(h.repo, 'worktree', 'add', '-q', '-b', `svc/${key}`, wt);
    writeFileSync(join(wt, 'half-done.txt'), 'an earlier leg left this\n');
    const agent = script(`echo "$SVC_ATTEMPT" > attempt.txt\ngit add attempt.txt\n${COMMIT} -m "$SVC_CARD_KEY: attempt $SVC_ATTEMPT"`);
    const s = await runDispatch(
      h.opts({ agentUser: pool, keys: [key], agent: { agentCmd: agent }, attempts: 2, parallel: 2, workflow: wf({ verify: 'test "$(cat attempt.txt)" = 1' }) }),
      h.deps(),
    );
    expect(s.legs[0]).toMatchObject({ disposition: 'implemented', bestOf: { winner: 1 } });
    expect(await git(wt, 'rev-parse', 'HEAD')).toBe(await git(h.repo, 'rev-parse', `svc/${key}-attempt-1`));
    expect(await git(wt, 'stash', 'list')).toContain(`svc: left uncommitted in svc/${key} before its attempts' winner`);
    expect(await git(wt, 'show', 'stash@{0}^3:half-done.txt')).toBe('an earlier leg left this');
    expect(h.seen.join('\n')).toContain(`${key}: uncommitted files in ${wt} are on the stash`);
  });

  it('a signal stops every attempt of the card, and no winner is picked', async () => {
    const key = h.item('task', 'Interrupted');
    const ctl = new AbortController();
    const deps = h.deps({ signal: ctl.signal });
    deps.output.legStarted = () => setTimeout(() => ctl.abort(new Interrupted('SIGINT')), 500);
    const started = Date.now();
    const s = await runDispatch(
      h.opts({ agentUser: pool, keys: [key], agent: { agentCmd: 'sleep 30' }, attempts: 2, parallel: 2, workflow: wf({ verify: 'true' }) }),
      deps,
    );
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(s).toMatchObject({ stopReason: 'interrupted', exitCode: 130 });
    expect(s.legs[0]).toMatchObject({ disposition: 'failed', bestOf: { winner: null } });
    expect(s.legs[0]!.bestOf!.attempts.map((a) => a.disposition)).toEqual(['failed', 'failed']);
  });
});
