// The run lifecycle per command and stop reason, against the real local service, with fake agents
// in a real temp git repository.
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runDispatch } from '../../../src/dispatch/lifecycle/dispatch.js';
import { Interrupted } from '../../../src/dispatch/signals.js';
import { runPaths } from '../../../src/dispatch/state/folder.js';
import { engineEachTest } from '../../support/engine.js';

const h = engineEachTest();

const cardsOf = async (runId: string) => Object.fromEntries((await h.service.getDispatchRun(runId)).cards.map((c) => [c.workItemKey, c.disposition]));
const journalOf = (runId: string) =>
  readFileSync(runPaths(h.stateDir, runId).journal, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('run KEY...', () => {
  it('runs the named cards in order, streams dispositions and closes completed/succeeded', async () => {
    const a = h.item('task', 'A');
    const b = h.item('task', 'B');
    const s = await runDispatch(h.opts({ keys: [b, a] }), h.deps());
    expect(s).toMatchObject({ stopReason: 'completed', status: 'succeeded', exitCode: 0 });
    expect(s.legs.map((l) => [l.key, l.disposition, l.sessionBranch])).toEqual([
      [b, 'implemented', `svc/${b}`],
      [a, 'implemented', `svc/${a}`],
    ]);
    expect(h.seen.filter((l) => l.startsWith('start'))).toEqual([`start ${b}`, `start ${a}`]);
    const run = await h.service.getDispatchRun(s.runId!);
    expect(run.cards.map((c) => [c.workItemKey, c.disposition, c.sessionBranch, c.exitCode])).toEqual([
      [b, 'implemented', `svc/${b}`, 0],
      [a, 'implemented', `svc/${a}`, 0],
    ]);
    // The journal holds every event with local numbers, acknowledged up to the run's seq.
    const j = journalOf(s.runId!);
    const evs = j.filter((r) => r.t === 'ev');
    expect(evs.map((r) => r.n)).toEqual([1, 2, 3, 4]);
    expect(j.filter((r) => r.t === 'ack').at(-1)).toMatchObject({ n: 4, seq: run.seq });
    expect(j.at(-1)).toMatchObject({ t: 'closed', stopReason: 'completed', status: 'succeeded' });
    const runJson = readFileSync(runPaths(h.stateDir, s.runId!).runJson, 'utf8');
    expect(runJson).not.toContain(h.svc.token);
    expect(JSON.parse(runJson)).toMatchObject({ runId: s.runId, baseUrl: h.svc.url, command: 'run' });
  });

  it('halts on a failed leg: the rest become not_reached, status failed, exit 1', async () => {
    const a = h.item('task', 'A');
    const b = h.item('task', 'B');
    const s = await runDispatch(h.opts({ keys: [a, b], agent: { agentCmd: 'sh -c "exit 3"' } }), h.deps());
    expect(s).toMatchObject({ stopReason: 'halted', status: 'failed', exitCode: 1 });
    expect(s.legs).toHaveLength(1);
    expect(s.legs[0]).toMatchObject({ key: a, disposition: 'failed', exitCode: 3 });
    expect(await cardsOf(s.runId!)).toEqual({ [a]: 'failed', [b]: 'not_reached' });
  });

  it('goes on after a failure with onFailure continue, and still closes failed', async () => {
    const a = h.item('task', 'A');
    const b = h.item('task', 'B');
    const s = await runDispatch(h.opts({ keys: [a, b], onFailure: 'continue', agent: { agentCmd: 'false' } }), h.deps());
    expect(s).toMatchObject({ stopReason: 'completed', status: 'failed', exitCode: 1 });
    expect(await cardsOf(s.runId!)).toEqual({ [a]: 'failed', [b]: 'failed' });
  });

  it('applies the "no changes" rule to code cards unless allowEmpty, never to research cards', async () => {
    const code = h.item('task', 'code');
    const research = h.item('task', 'research', { type: 'research' });
    const s = await runDispatch(h.opts({ keys: [research, code], onFailure: 'continue', agent: { agentCmd: 'true' } }), h.deps());
    expect(s.legs.map((l) => [l.key, l.disposition, l.reason])).toEqual([
      [research, 'implemented', null],
      [code, 'failed', 'no changes'],
    ]);
    const again = await runDispatch(h.opts({ keys: [code], agent: { agentCmd: 'true' }, allowEmpty: true }), h.deps());
    expect(again.legs[0]!.disposition).toBe('implemented');
  });

  it('skips a human card and stops gated at the card it blocks', async () => {
    const human = h.item('task', 'human', { executor: 'human' });
    const a = h.item('task', 'A');
    const gated = h.item('task', 'gated', { blockedBy: [human] });
    const s = await runDispatch(h.opts({ keys: [human, a, gated] }), h.deps());
    expect(s).toMatchObject({ stopReason: 'gated', status: 'succeeded', exitCode: 0 });
    expect(await cardsOf(s.runId!)).toEqual({ [human]: 'skipped', [a]: 'implemented', [gated]: 'not_reached' });
  });

  it('stops replanned when an item gains an open blocker after the run opened', async () => {
    const a = h.item('task', 'A');
    const b = h.item('task', 'B');
    const blocker = h.item('task', 'new blocker');
    const deps = h.deps();
    const realAgentProcess = deps.runAgentProcess;
    deps.runAgentProcess = async (spec) => {
      const r = await realAgentProcess(spec);
      h.svc.admin.addLink(blocker, b, 'blocks');
      return r;
    };
    const s = await runDispatch(h.opts({ keys: [a, b] }), deps);
    expect(s).toMatchObject({ stopReason: 'replanned', status: 'succeeded', exitCode: 0 });
    expect(await cardsOf(s.runId!)).toEqual({ [a]: 'implemented', [b]: 'not_reached' });
  });

  it.each([
    ['archived', (b: string) => h.svc.admin.archiveItem(b)],
    [
      're-parented',
      (b: string) => h.svc.admin.setFields(b, { parent_id: h.svc.db.prepare(`SELECT id FROM work_items WHERE title = 'new parent'`).get()!.id as string }),
    ],
  ])('stops replanned when the next item was %s since the run opened', async (what, change) => {
    h.item('story', 'new parent');
    const a = h.item('task', 'A');
    const b = h.item('subtask', 'B', { parentKey: h.item('story', 'old parent') });
    const deps = h.deps();
    const realAgentProcess = deps.runAgentProcess;
    deps.runAgentProcess = async (spec) => {
      const r = await realAgentProcess(spec);
      change(b);
      return r;
    };
    const s = await runDispatch(h.opts({ keys: [a, b] }), deps);
    expect(s).toMatchObject({ stopReason: 'replanned', status: 'succeeded' });
    expect(h.seen.some((l) => l.includes(what))).toBe(true);
  });

  it('a dry run opens nothing and answers the set with skip reasons', async () => {
    const a = h.item('task', 'A');
    const done = h.item('task', 'done', { status: 'done' });
    const s = await runDispatch(h.opts({ keys: [a, done], dryRun: true }), h.deps());
    expect(s).toMatchObject({ runId: null, dryRun: true, exitCode: 0 });
    expect(s.cards.map((c) => [c.key, c.skipReason])).toEqual([
      [a, null],
      [done, 'done (status done)'],
    ]);
    expect(existsSync(`${h.stateDir}/runs`)).toBe(false);
  });

  it('sends redacted output as body events only with sendLogs, and always keeps the local log', async () => {
    const a = h.item('task', 'A', { type: 'research' });
    const agent = { agentCmd: `sh -c "echo token=${h.svc.token}; echo é€😀"` };
    const quiet = await runDispatch(h.opts({ keys: [a], agent }), h.deps());
    expect((await h.service.getDispatchRun(quiet.runId!)).seq).toBe(2);
    const log = readFileSync(`${runPaths(h.stateDir, quiet.runId!).logs}/${a}.log`, 'utf8');
    expect(log).toContain('token=[REDACTED]');
    expect(log).toContain('é€😀');
    expect(log).not.toContain(h.svc.token);
    const loud = await runDispatch(h.opts({ keys: [a], agent, sendLogs: true }), h.deps());
    const bodies = journalOf(loud.runId!).filter((r) => r.t === 'ev' && (r.ev as { body?: string }).body);
    expect(bodies.length).toBeGreaterThan(0);
    expect(JSON.stringify(bodies)).not.toContain(h.svc.token);
    expect((await h.service.getDispatchRun(loud.runId!)).seq).toBe(2 + bodies.length);
  });
});

describe('stops from outside the legs', () => {
  it('SIGINT: no new leg, the agent is stopped, the run closes interrupted/cancelled, exit 130', async () => {
    const a = h.item('task', 'A');
    const b = h.item('task', 'B');
    const ctl = new AbortController();
    const deps = h.deps({ signal: ctl.signal });
    deps.output.legStarted = () => setTimeout(() => ctl.abort(new Interrupted('SIGINT')), 100);
    const started = Date.now();
    const s = await runDispatch(h.opts({ keys: [a, b], agent: { agentCmd: 'sleep 30' } }), deps);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(s).toMatchObject({ stopReason: 'interrupted', status: 'cancelled', exitCode: 130 });
    expect(await cardsOf(s.runId!)).toEqual({ [a]: 'failed', [b]: 'not_reached' });
  });

  it('the whole-run timeout closes timed_out', async () => {
    const a = h.item('task', 'A');
    const s = await runDispatch(
      h.opts({ keys: [a], agent: { agentCmd: 'sleep 30' }, timeouts: { idleMs: 30_000, cardMs: 60_000, killGraceMs: 200, runMs: 300 } }),
      h.deps(),
    );
    expect(s).toMatchObject({ stopReason: 'interrupted', status: 'timed_out', exitCode: 1 });
  });

  it('a run closed under us (heartbeat 409) stops the agents and exits 1 without closing again', async () => {
    const a = h.item('task', 'A');
    const deps = h.deps();
    let closedAt = 0;
    deps.output.legStarted = () => {
      setTimeout(async () => {
        const runs = h.svc.db.prepare(`SELECT id FROM dispatch_runs`).all() as { id: string }[];
        await h.service.closeDispatchRun(runs[0]!.id, { stopReason: 'halted', status: 'failed' });
        closedAt = Date.now();
      }, 50);
    };
    const s = await runDispatch(h.opts({ keys: [a], agent: { agentCmd: 'sleep 30' }, heartbeatIntervalMs: 100 }), deps);
    expect(Date.now() - closedAt).toBeLessThan(5_000);
    expect(s).toMatchObject({ stopReason: 'halted', status: 'failed', exitCode: 1 });
    expect(h.seen.some((l) => l.includes('closed by the service'))).toBe(true);
    // Nothing more was sent: no close intent, the journal only marks what the service says.
    const j = journalOf(s.runId!);
    expect(j.some((r) => r.t === 'close')).toBe(false);
    expect(j.at(-1)).toMatchObject({ t: 'closed', stopReason: 'halted' });
  });

  it('stops max once the reported spend reaches --max-cost', async () => {
    const a = h.item('task', 'A', { type: 'research' });
    const b = h.item('task', 'B', { type: 'research' });
    const result = JSON.stringify({ type: 'result', subtype: 'success', is_error: false, result: 'ok', total_cost_usd: 0.6 });
    const agent = { agentCmd: `node -e 'console.log(process.argv[1])' '${result}'`, stream: 'claude-stream-json' as const };
    const s = await runDispatch(h.opts({ keys: [a, b], agent, maxCostUsd: 0.5 }), h.deps());
    expect(s).toMatchObject({ stopReason: 'max', status: 'succeeded' });
    expect(s.legs.map((l) => l.costUsd)).toEqual([0.6]);
  });
});
