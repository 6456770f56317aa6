// A person's change wins over a running leg (src/dispatch/lifecycle/reconcile.ts): the item of a
// running leg is read again at the heartbeat's cadence; closed, archived, handed to a human or
// moved out of the run's scope, the leg's agent is stopped, its commits stay on its branch, the leg
// ends failed with the reason, and the run goes on. The reads are one per card per floor, a failing
// one stops nothing, and --no-reconcile lets the leg run to its end.
import { chmodSync, existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { WorkItemDetail } from '../../../src/contract/types.js';
import { runDispatch } from '../../../src/dispatch/lifecycle/dispatch.js';
import { reconcileReason } from '../../../src/dispatch/lifecycle/reconcile.js';
import { run } from '../../support/cli.js';
import { startHarness, type Harness } from '../../support/engine.js';

/** Commits, says it is running, then sleeps (at most 20 s) unless `$GATE/$SVC_CARD_KEY.go` appears. */
function agent(gate: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-reconcile-agent-'));
  chmodSync(dir, 0o755);
  const body = [
    'set -e',
    'git -c user.name=a -c user.email=a@example.invalid commit -q --allow-empty -m "$SVC_CARD_KEY: first step"',
    `touch ${gate}/$SVC_CARD_KEY.running`,
    `i=0; while [ ! -e ${gate}/$SVC_CARD_KEY.go ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done`,
  ].join('\n');
  writeFileSync(join(dir, 'agent.sh'), body, { mode: 0o755 });
  return `sh ${join(dir, 'agent.sh')}`;
}

async function until(what: () => boolean, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!what()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 25));
  }
}

let h: Harness;
let gate: string;
beforeEach(async () => {
  h = await startHarness();
  gate = mkdtempSync(join(tmpdir(), 'svc-reconcile-gate-'));
  chmodSync(gate, 0o777);
});
afterEach(async () => {
  await h.close();
});

const opts = (keys: string[], over = {}) =>
  h.opts({ command: 'run', keys, agent: { agentCmd: agent(gate) }, heartbeatIntervalMs: 100, reconcile: { floorMs: 100 }, ...over });

describe('reconcile', () => {
  it('a leg whose item is marked done stops, keeps its commit, ends with the reason, and the next card runs', async () => {
    const [a, b] = [h.item('task', 'A'), h.item('task', 'B')];
    const done = runDispatch(opts([a, b]), h.deps());
    await until(() => existsSync(join(gate, `${a}.running`)));
    const marked = Date.now();
    h.svc.admin.setStatus(a, 'done');
    // B is let go once it starts, so the run ends.
    await until(() => existsSync(join(gate, `${b}.running`)));
    const stoppedWithin = Date.now() - marked;
    writeFileSync(join(gate, `${b}.go`), '');
    const s = await done;
    expect(s.legs.map((l) => [l.key, l.disposition, l.reason])).toEqual([
      [a, 'failed', 'closed on the service'],
      [b, 'implemented', null],
    ]);
    expect(stoppedWithin).toBeLessThan(5_000);
    expect(await run('git', ['log', '-1', '--format=%s', `svc/${a}`], h.repo)).toBe(`${a}: first step\n`);
    expect(h.seen).toContain(`warn ${a}: closed on the service: stopping its agent; what it committed stays on its branch`);
  });

  it('reads each running leg’s item at most once per floor, in one tick for all of them', async () => {
    const keys = [h.item('task', '1'), h.item('task', '2'), h.item('task', '3'), h.item('task', '4')];
    const reads: [string, number][] = [];
    const service = {
      ...h.service,
      readWorkItem: (key: string, o?: Parameters<NonNullable<typeof h.service.readWorkItem>>[1]) => {
        reads.push([key, Date.now()]);
        return h.service.readWorkItem!(key, o);
      },
    };
    const done = runDispatch(opts(keys, { parallel: 4, reconcile: { floorMs: 400 } }), h.deps({ service }));
    await until(() => keys.every((k) => existsSync(join(gate, `${k}.running`))));
    // Three reads of each card (two floors apart at least) while they all run, waited for.
    await until(() => keys.every((k) => reads.filter(([key]) => key === k).length >= 3));
    for (const k of keys) writeFileSync(join(gate, `${k}.go`), '');
    const s = await done;
    expect(s.legs.every((l) => l.disposition === 'implemented')).toBe(true);
    for (const k of keys) {
      const at = reads.filter(([key]) => key === k).map(([, t]) => t);
      expect(at.length).toBeGreaterThan(1);
      // The timer ticks every 100 ms; a card is read again only once the floor has passed.
      for (let i = 1; i < at.length; i++) expect(at[i]! - at[i - 1]!).toBeGreaterThanOrEqual(390);
    }
  });

  it('a failing re-read stops nothing; --no-reconcile lets a closed item’s leg finish', async () => {
    const a = h.item('task', 'A');
    let failed = 0;
    const failing = { ...h.service, readWorkItem: () => (failed++, Promise.reject(Object.assign(new Error('service down'), { status: 503 }))) };
    const first = runDispatch(opts([a]), h.deps({ service: failing }));
    await until(() => existsSync(join(gate, `${a}.running`)));
    // Re-reads that fail, three of them, and the leg still runs.
    await until(() => failed >= 3);
    writeFileSync(join(gate, `${a}.go`), '');
    expect((await first).legs[0]).toMatchObject({ disposition: 'implemented' });

    const b = h.item('task', 'B');
    const second = runDispatch(opts([b], { reconcile: false }), h.deps());
    await until(() => existsSync(join(gate, `${b}.running`)));
    h.svc.admin.setStatus(b, 'done');
    await new Promise((r) => setTimeout(r, 500));
    writeFileSync(join(gate, `${b}.go`), '');
    expect((await second).legs[0]).toMatchObject({ disposition: 'implemented' });
  });
});

describe('what stops a leg', () => {
  const item = (over: Partial<WorkItemDetail>) =>
    ({ key: 'P-1', status: 'todo', statusCategory: 'todo', archivedAt: null, executor: null, ancestorKeys: ['P-0'], ...over }) as WorkItemDetail;
  it.each([
    [{ statusCategory: 'done', status: 'done' }, 'closed on the service'],
    [{ archivedAt: '2026-12-01T00:00:00Z' }, 'archived'],
    [{ executor: 'human' }, 'now for a human'],
    [{ ancestorKeys: [] }, 'moved out of scope'],
    [{ status: 'in_progress', statusCategory: 'in_progress' }, null],
  ] as [Partial<WorkItemDetail>, string | null][])('%j → %s', (now, why) => {
    expect(reconcileReason(item({}), item(now), 'P-0')).toBe(why);
  });
  it('an item beneath no scope never moves out of it', () => {
    expect(reconcileReason(item({}), item({ ancestorKeys: [] }), null)).toBeNull();
  });
});
