// Fault soak: the real client and engine against the local service through a fault
// proxy that resets connections before and after the request is applied, answers 429 bursts with
// X-RateLimit-Reset, runs of 503, HTML 500s, slow answers and truncated bodies — seeded, so a
// failing seed replays (SVC_TRUST_SEED=<seed>). For each invocation: the service's event stream
// equals the local journal (same events, same order, no duplicate), exactly one run was opened,
// and the close is the right one (stop reason and status), recorded in the journal too.
// Quick: 20-card runs × 3 seeds; full (npm run soak): 200-card runs × 20 seeds.
//
// The proxy's plan keeps HTML 500s off the open and the close (a 500 on a write is not retried,
// docs/dispatch.md#the-wire); the targeted tests at the end put each ambiguous fault, the HTML 500 included, on
// the close and check that the invocation still closes the run right.
//
// Every test has a world of its own (service, proxy, state folder), so the tests run side by side:
// their time is retry waits (a 429's reset is whole seconds) and agents starting, not CPU.
import { describe, expect, test, type TestContext } from 'vitest';
import type { FaultRule } from '../support/fault-proxy.js';
import { byMode, rng, seedsFor } from './support.js';
import {
  agreementProblems,
  journalDispositions,
  journalOf,
  recoverAll,
  runRows,
  runSoak,
  soakOptions,
  startSoakWorld,
  type SoakWorld,
} from './soak-harness.js';

const CARDS = byMode(20, 200);
const SEEDS = seedsFor(7, byMode(3, 20));

/** A world for the test `t` (its own context: concurrent tests have no "current" one), closed when it ends. */
async function worldFor(t: TestContext, opts: Parameters<typeof startSoakWorld>[0]): Promise<SoakWorld> {
  const w = await startSoakWorld(opts);
  t.onTestFinished(() => w.close());
  return w;
}

const ANY = /^\/api\/v1\//;
const EVENTS = /^\/api\/v1\/dispatch-runs\/[^/]+\/events$/;
const RUN_PATHS = /^\/api\/v1\/dispatch-runs/;
/**
 * Resets and cut answers on the close are in the soak since eb55467 settles an ambiguous close by
 * reading the run (before it, the full soak's seeds 7926, 15845 and 126711 failed there). Set to
 * false only to keep them out while a regression there is being fixed.
 */
const AMBIGUOUS_FAULTS_ON_THE_CLOSE = true;
const NOT_THE_CLOSE = /^\/api\/v1\/(?!dispatch-runs\/[^/]+\/close$)/;
const AMBIGUOUS = AMBIGUOUS_FAULTS_ON_THE_CLOSE ? ANY : NOT_THE_CLOSE;

/** The plan of one seed: a 429 burst and a 503 run at seeded places, and seeded random faults. */
function planFor(seed: number, scale: number): { rules: FaultRule[]; text: string } {
  const r = rng(seed ^ 0x5eed);
  const burstAt = r.int(2, 6 * scale);
  const runAt = r.int(2, 10 * scale);
  const rules: FaultRule[] = [
    { method: 'POST', path: EVENTS, nth: [burstAt, burstAt + 1, burstAt + 2], fault: { kind: 'rate-limit', resetInMs: 150 } },
    { path: RUN_PATHS, nth: [runAt, runAt + 1, runAt + 2, runAt + 3], fault: { kind: 'status', status: 503 } },
    { path: AMBIGUOUS, probability: 0.03, fault: { kind: 'reset-before' } },
    { path: AMBIGUOUS, probability: 0.03, fault: { kind: 'reset-after' } },
    { path: AMBIGUOUS, probability: 0.03, fault: { kind: 'truncate' } },
    { method: 'GET', path: ANY, probability: 0.03, fault: { kind: 'html-500' } },
    { method: 'POST', path: EVENTS, probability: 0.04, fault: { kind: 'html-500' } },
    { path: ANY, probability: 0.02, fault: { kind: 'status', status: 503 } },
    { path: ANY, probability: 0.003, fault: { kind: 'rate-limit', resetInMs: 100 } },
    { path: ANY, probability: 0.06, fault: { kind: 'latency', ms: r.int(10, 120) } },
  ];
  return { rules, text: `429 burst at append #${burstAt}, 503 run at dispatch request #${runAt}` };
}

interface Case {
  command: 'batch' | 'run';
  onFailure: 'halt' | 'continue';
  parallel: number;
  failKeys: string[];
}

function caseFor(seed: number, keys: string[]): Case {
  const r = rng(seed);
  const failKeys = keys.filter(() => r.chance(0.1));
  return { command: r.pick(['batch', 'run'] as const), onFailure: r.chance(0.7) ? 'continue' : 'halt', parallel: r.pick([1, 1, 2, 3]), failKeys };
}

describe.concurrent('fault soak: service stream = journal, one run per invocation, the right close', () => {
  test.for(SEEDS)(`seed %i: ${CARDS}-card run through the fault proxy`, { timeout: byMode(120_000, 600_000) }, async (seed, t) => {
    const plan = planFor(seed, Math.max(1, CARDS / 20));
    const w = await worldFor(t, { seed, plan: plan.rules });
    const keys = Array.from(
      { length: CARDS },
      (_, i) => w.svc.admin.createWorkItem({ projectKey: w.svc.projectKey, kind: 'task', title: `Card ${i + 1}`, type: 'chore' }).key,
    );
    const c = caseFor(seed, keys);
    const label = `seed ${seed} (replay: SVC_TRUST_SEED=${seed}) ${JSON.stringify({ ...c, failKeys: c.failKeys.length })} ${plan.text}`;

    const summary = await runSoak(
      w,
      soakOptions(w, {
        command: c.command,
        keys: c.command === 'run' ? keys : [],
        onFailure: c.onFailure,
        parallel: c.parallel,
        failKeys: c.failKeys,
      }),
    );

    const faults = w.proxy.seen.filter((x) => x.fault).map((x) => x.fault);
    const byKind = Object.entries(faults.reduce<Record<string, number>>((m, f) => ({ ...m, [f!]: (m[f!] ?? 0) + 1 }), {}))
      .map(([k, v]) => `${k}×${v}`)
      .join(' ');
    console.log(`soak seed ${seed}: ${c.command} ${CARDS} cards, parallel ${c.parallel}, ${c.onFailure}; ${w.proxy.seen.length} requests, faults ${byKind}`);
    const context = `${label}\nfaults: ${faults.length} (${[...new Set(faults)].join(', ')})\nwarnings: ${w.warnings.slice(0, 8).join(' | ')}`;
    // Exactly one run for the invocation.
    const rows = runRows(w);
    expect(
      rows.map((r) => r.id),
      context,
    ).toEqual([summary.runId]);
    const runId = summary.runId!;
    // The stream on the service is the journal, event for event.
    expect(agreementProblems(w, runId), context).toEqual([]);

    // The right close: what the legs deserve, on the service, in the summary and in the journal.
    const { journal } = journalOf(w.stateDir, runId);
    const last = journalDispositions(journal);
    const failed = [...last.values()].some((d) => d === 'failed');
    const stopReason = failed && c.onFailure === 'halt' ? 'halted' : c.command === 'run' ? 'completed' : 'drained';
    const status = failed ? 'failed' : 'succeeded';
    expect({ status: rows[0]!.status, stopReason: rows[0]!.stop_reason }, context).toEqual({ status, stopReason });
    expect({ status: summary.status, stopReason: summary.stopReason, exitCode: summary.exitCode }, context).toEqual({
      status,
      stopReason,
      exitCode: failed ? 1 : 0,
    });
    expect(journal.closing, context).toEqual({ stopReason, status });
    expect(journal.closed, context).toEqual({ stopReason, status });
    // Every card the agent was told to fail failed, every other one that ran was implemented.
    for (const [key, d] of last) expect(`${key} ${d}`, context).toBe(`${key} ${c.failKeys.includes(key) ? 'failed' : 'implemented'}`);
    if (c.onFailure === 'continue') expect(last.size, context).toBe(CARDS);
    // The faults really happened (the soak is not vacuous).
    expect(faults.length, context).toBeGreaterThan(0);
  });
});

describe.concurrent('an ambiguous fault on the close itself', () => {
  async function closeUnder(t: TestContext, fault: FaultRule['fault']) {
    const w = await worldFor(t, { seed: 1 });
    const keys = Array.from(
      { length: 3 },
      (_, i) => w.svc.admin.createWorkItem({ projectKey: w.svc.projectKey, kind: 'task', title: `C${i}`, type: 'chore' }).key,
    );
    w.proxy.setPlan([{ method: 'POST', path: /\/close$/, times: 1, fault }]);
    const summary = await runSoak(w, soakOptions(w, { command: 'run', keys }));
    console.log(
      `close under ${fault.kind}: exit ${summary.exitCode}, ${summary.stopReason}/${summary.status}, service ${runRows(w)[0]?.status}; warnings: ${w.warnings.join(' | ')}`,
    );
    return { w, summary };
  }

  // To the client every one of these is ambiguous: the request was sent whole, no usable answer
  // came back. Only the service knows whether the close was applied (reset-after, truncate) or
  // not (reset-before: the proxy read the request and reset; an HTML 500 from a gateway).
  const AMBIGUOUS_CLOSES = [
    ['a reset before the service saw it', { kind: 'reset-before' } as const],
    ['a reset after the service applied it', { kind: 'reset-after' } as const],
    ['an answer cut short', { kind: 'truncate' } as const],
    ['an HTML 500 from a gateway', { kind: 'html-500' } as const],
  ] as const;

  // Whatever the invocation concluded, the journal recorded the close it meant to send, and
  // `svc runs recover` leaves the service closed right and in agreement with the journal.
  test.for(AMBIGUOUS_CLOSES)('%s: after recover, the service is closed right and agrees with the journal', async ([_name, fault], t) => {
    const { w, summary } = await closeUnder(t, fault);
    const rows = runRows(w);
    expect(rows).toHaveLength(1);
    const runId = rows[0]!.id;
    expect(summary.runId).toBe(runId);
    expect(journalOf(w.stateDir, runId).journal.closing).toEqual({ stopReason: 'completed', status: 'succeeded' });
    await recoverAll(w);
    expect(runRows(w)[0]).toMatchObject({ status: 'succeeded', stop_reason: 'completed' });
    expect(agreementProblems(w, runId)).toEqual([]);
    expect(journalOf(w.stateDir, runId).journal.closed).toMatchObject({ status: 'succeeded', stopReason: 'completed' });
  });

  // And the invocation itself settles it: it reads the run (getDispatchRun) after an ambiguous failure of
  // the close, closes again if the close did not land, and ends with the exit the run deserves and
  // the journal closed (until eb55467 it exited 5 and, when the close had not landed, left the run
  // `running` on the service until recover).
  test.for(AMBIGUOUS_CLOSES)('%s: the invocation itself closes the run right (exit 0, journal closed)', async ([_name, fault], t) => {
    const { w, summary } = await closeUnder(t, fault);
    expect(runRows(w)[0]).toMatchObject({ status: 'succeeded', stop_reason: 'completed' });
    expect(summary.exitCode).toBe(0);
    expect(journalOf(w.stateDir, summary.runId!).journal.closed).toMatchObject({ status: 'succeeded', stopReason: 'completed' });
  });
});
