// docs/dispatch.md "Outcomes are honest": a command given keys of which no card ran exits 1 saying why
// and opens no run; `continue` of a run with nothing left opens no run; a retried command that
// finds its closed run by the idempotency key answers its legs as recorded; and the service hears
// of a leg's start and end when they happen, so the live page times legs right.
import { describe, expect, it } from 'vitest';
import { runDispatch } from '../../../src/dispatch/lifecycle/dispatch.js';
import type { AdminWorkItem } from '../../../src/server/admin.js';
import { authenticate } from '../../../src/server/auth.js';
import { runView } from '../../../src/server/web/data.js';
import { engineEachTest } from '../../support/engine.js';

const h = engineEachTest();

const runCount = () => (h.svc.db.prepare('SELECT COUNT(*) AS n FROM dispatch_runs').get() as { n: number }).n;

describe('a command given keys of which no card ran', () => {
  it.each([
    ['review with no open pull request', 'review', {}, 'no open delivery'],
    [
      'fix with no failing pull request',
      'fix',
      {
        deliveries: [
          {
            repo: 'acme/shop',
            number: 7,
            title: 'PR',
            url: 'https://x.test/acme/shop/pull/7',
            state: 'open',
            ci: 'passing',
            baseRef: null,
            defaultBranch: 'main',
          },
        ],
      },
      'no open delivery with ci: failing',
    ],
    ['run of a done item', 'run', { status: 'done' }, 'done (status done)'],
    ['run of a human item', 'run', { executor: 'human' }, 'executor: human'],
  ] as const)('%s: exit 1, the reason, no run opened', async (_name, command, extra, reason) => {
    const key = h.item('task', 'T', structuredClone(extra) as Partial<AdminWorkItem>);
    const s = await runDispatch(h.opts({ command, keys: [key] }), h.deps());
    expect(s).toMatchObject({ runId: null, exitCode: 1, note: `no card ran: ${key} ${reason}` });
    expect(runCount()).toBe(0);
  });

  it('run KEY while KEY is in another live run: exit 1, the run that holds it named, nothing opened here', async () => {
    const key = h.item('task', 'T');
    const other = await h.service.openDispatchRun({
      projectKey: h.svc.projectKey,
      command: 'run',
      origin: 'local',
      agent: 'custom',
      idempotencyKey: 'elsewhere',
      cards: [{ workItemKey: key }],
    });
    const s = await runDispatch(h.opts({ command: 'run', keys: [key] }), h.deps());
    expect(s).toMatchObject({ runId: null, exitCode: 1, note: `no card ran: ${key} is in run ${other.run.id} (running); no run opened` });
    expect(runCount()).toBe(1);
    expect((await h.service.getDispatchRun(other.run.id)).status).toBe('running');
  });

  it('a set where one card runs is not this case: exit 0, the skip recorded', async () => {
    const [a, b] = [h.item('task', 'A'), h.item('task', 'B', { status: 'done' })];
    const s = await runDispatch(h.opts({ command: 'run', keys: [a, b] }), h.deps());
    expect(s).toMatchObject({ exitCode: 0, status: 'succeeded' });
    expect(s.legs.map((l) => [l.key, l.disposition])).toEqual([[a, 'implemented']]);
    // Counted as a person writes it: "1 card", "2 cards".
    expect(h.seen.find((l) => l.includes(' opened '))).toMatch(/: 1 of 2 named cards$/);
    const one = await runDispatch(h.opts({ command: 'run', keys: [h.item('task', 'C')] }), h.deps());
    expect(one.exitCode).toBe(0);
    expect(h.seen.filter((l) => l.includes(' opened ')).at(-1)).toMatch(/: 1 of 1 named card$/);
  });
});

describe('continue', () => {
  it('of a run whose legs all landed opens no run and succeeds', async () => {
    const key = h.item('task', 'T');
    const first = await runDispatch(h.opts({ command: 'run', keys: [key] }), h.deps());
    expect(first.exitCode).toBe(0);
    const s = await runDispatch(h.opts({ command: 'continue', keys: [first.runId!] }), h.deps());
    expect(s).toMatchObject({ runId: null, exitCode: 0 });
    expect(s.note).toMatch(/nothing left to run, no run opened$/);
    expect(runCount()).toBe(1);
  });
});

describe('--idempotency-key, the command retried whole', () => {
  it('finds its closed run and answers its legs as recorded, not not_reached', async () => {
    const key = h.item('task', 'T');
    const first = await runDispatch(h.opts({ command: 'run', keys: [key], idempotencyKey: 'ci-job-7' }), h.deps());
    const again = await runDispatch(h.opts({ command: 'run', keys: [key], idempotencyKey: 'ci-job-7' }), h.deps());
    expect(again).toMatchObject({ runId: first.runId, status: 'succeeded', exitCode: 0 });
    expect(again.legs).toEqual(first.legs);
    expect(again.legs.map((l) => [l.key, l.disposition, l.sessionBranch])).toEqual([[key, 'implemented', `svc/${key}`]]);
  });

  it("on a machine without the local record: the service's cards (disposition, exit code, branch)", async () => {
    const key = h.item('task', 'T');
    const first = await runDispatch(h.opts({ command: 'run', keys: [key], idempotencyKey: 'ci-job-8' }), h.deps());
    const { mkdtempSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const elsewhere = h.deps({ stateDir: mkdtempSync(`${tmpdir()}/svc-state-other-`) });
    const again = await runDispatch(h.opts({ command: 'run', keys: [key], idempotencyKey: 'ci-job-8' }), elsewhere);
    expect(again.runId).toBe(first.runId);
    expect(again.legs).toMatchObject([{ key, disposition: 'implemented', exitCode: 0, sessionBranch: `svc/${key}` }]);
  });
});

describe('the live page', () => {
  it('times a leg from when it started to when it ended, though events are batched on a one-second interval', async () => {
    const key = h.item('task', 'T');
    const agent = { agentCmd: 'sh -c "sleep 0.6 && git -c user.name=a -c user.email=a@example.invalid commit -q --allow-empty -m \\"$SVC_CARD_KEY: done\\""' };
    const s = await runDispatch(h.opts({ command: 'run', keys: [key], agent, flushIntervalMs: 1000 }), h.deps());
    expect(s.legs[0]).toMatchObject({ disposition: 'implemented' });
    const principal = authenticate(h.svc.db, `Bearer ${h.svc.token}`, new Date());
    const leg = runView(h.svc.db, principal!, s.runId!)!.legs[0]!;
    const ms = Date.parse(leg.endedAt!) - Date.parse(leg.startedAt!);
    expect(ms).toBeGreaterThanOrEqual(550);
    expect(ms).toBeLessThanOrEqual(s.legs[0]!.durationMs + 500);
  });
});
