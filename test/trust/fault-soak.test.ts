// Fault soak (issue 8): the real client and engine against the local service through a fault
// proxy that resets connections before and after the request is applied, answers 429 bursts with
// X-RateLimit-Reset, runs of 503, HTML 500s, slow answers and truncated bodies — seeded, so a
// failing seed replays (SVC_TRUST_SEED=<seed>). For each invocation: the service's event stream
// equals the local journal (same events, same order, no duplicate), exactly one run was opened,
// and the close is the right one (stop reason and status), recorded in the journal too.
// Quick: 20-card runs × 3 seeds; full (npm run soak): 200-card runs × 20 seeds.
//
// The proxy's plan keeps HTML 500s off the open and the close: for a write, a 500 is not retried
// (DISPATCH §5), so the invocation cannot open or close there by design. The targeted tests at the
// end show what happens then, and that `svc runs recover` finishes the job. Ambiguous faults on
// the close are there too (see AMBIGUOUS_FAULTS_ON_THE_CLOSE).
import { afterEach, describe, expect, test } from 'vitest';
import type { FaultRule } from '../support/fault-proxy.js';
import { byMode, rng, seedsFor } from './support.js';
import {
  agreementProblems, journalDispositions, journalOf, recoverAll, runRows, runSoak, soakOptions, startSoakWorld, type SoakWorld,
} from './soak-harness.js';

const CARDS = byMode(20, 200);
const SEEDS = seedsFor(7, byMode(3, 20));

let world: SoakWorld | null = null;
afterEach(async () => {
  await world?.close();
  world = null;
});

const ANY = /^\/api\/v1\//;
const EVENTS = /^\/api\/v1\/dispatch-runs\/[^/]+\/events$/;
const RUN_PATHS = /^\/api\/v1\/dispatch-runs/;
/**
 * Ambiguous faults (reset after the service applied it, an answer cut short) on the close are
 * kept out of the soak while the known bug pinned below ("the invocation itself learns its close
 * landed") stands: with them, a seed that hits the close fails on that one bug (full soak, seed
 * 7926). Set to true once it is fixed.
 */
const AMBIGUOUS_FAULTS_ON_THE_CLOSE = false;
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
    { path: ANY, probability: 0.03, fault: { kind: 'reset-before' } },
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

describe('fault soak: service stream = journal, one run per invocation, the right close', () => {
  test.each(SEEDS)(`seed %i: ${CARDS}-card run through the fault proxy`, async (seed) => {
    const plan = planFor(seed, Math.max(1, CARDS / 20));
    const w = (world = await startSoakWorld({ seed, plan: plan.rules }));
    const keys = Array.from({ length: CARDS }, (_, i) =>
      w.svc.admin.createWorkItem({ projectKey: w.svc.projectKey, kind: 'task', title: `Card ${i + 1}`, type: 'chore' }).key);
    const c = caseFor(seed, keys);
    const label = `seed ${seed} (replay: SVC_TRUST_SEED=${seed}) ${JSON.stringify({ ...c, failKeys: c.failKeys.length })} ${plan.text}`;

    const summary = await runSoak(w, soakOptions(w, {
      command: c.command, keys: c.command === 'run' ? keys : [], onFailure: c.onFailure, parallel: c.parallel, failKeys: c.failKeys,
    }));

    const faults = w.proxy.seen.filter((x) => x.fault).map((x) => x.fault);
    const byKind = Object.entries(faults.reduce<Record<string, number>>((m, f) => ({ ...m, [f!]: (m[f!] ?? 0) + 1 }), {})).map(([k, v]) => `${k}×${v}`).join(' ');
    console.log(`soak seed ${seed}: ${c.command} ${CARDS} cards, parallel ${c.parallel}, ${c.onFailure}; ${w.proxy.seen.length} requests, faults ${byKind}`);
    const context = `${label}\nfaults: ${faults.length} (${[...new Set(faults)].join(', ')})\nwarnings: ${w.warnings.slice(0, 8).join(' | ')}`;
    // Exactly one run for the invocation.
    const rows = runRows(w);
    expect(rows.map((r) => r.id), context).toEqual([summary.runId]);
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
    expect({ status: summary.status, stopReason: summary.stopReason, exitCode: summary.exitCode }, context).toEqual({ status, stopReason, exitCode: failed ? 1 : 0 });
    expect(journal.closing, context).toEqual({ stopReason, status });
    expect(journal.closed, context).toEqual({ stopReason, status });
    // Every card the agent was told to fail failed, every other one that ran was implemented.
    for (const [key, d] of last) expect(`${key} ${d}`, context).toBe(`${key} ${c.failKeys.includes(key) ? 'failed' : 'implemented'}`);
    if (c.onFailure === 'continue') expect(last.size, context).toBe(CARDS);
    // The faults really happened (the soak is not vacuous).
    expect(faults.length, context).toBeGreaterThan(0);
  }, byMode(120_000, 600_000));
});

describe('an ambiguous fault on the close itself', () => {
  async function closeUnder(fault: FaultRule['fault']) {
    const w = (world = await startSoakWorld({ seed: 1 }));
    const keys = Array.from({ length: 3 }, (_, i) => w.svc.admin.createWorkItem({ projectKey: w.svc.projectKey, kind: 'task', title: `C${i}`, type: 'chore' }).key);
    w.proxy.setPlan([{ method: 'POST', path: /\/close$/, times: 1, fault }]);
    const summary = await runSoak(w, soakOptions(w, { command: 'run', keys }));
    console.log(`close under ${fault.kind}: exit ${summary.exitCode}, ${summary.stopReason}/${summary.status}; warnings: ${w.warnings.join(' | ')}`);
    return { w, summary };
  }

  // The close was applied, only its answer was lost: the service holds the right close.
  test.each([
    ['reset after the service applied it', { kind: 'reset-after' } as const],
    ['an answer cut short', { kind: 'truncate' } as const],
  ])('%s: the service is closed right and the run agrees with the journal', async (_name, fault) => {
    const { w, summary } = await closeUnder(fault);
    const rows = runRows(w);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ status: 'succeeded', stop_reason: 'completed' });
    expect(agreementProblems(w, rows[0]!.id)).toEqual([]);
    // Whatever the invocation concluded, recover leaves nothing behind and changes nothing.
    await recoverAll(w);
    expect(runRows(w)[0]).toMatchObject({ status: 'succeeded', stop_reason: 'completed' });
    expect(journalOf(w.stateDir, rows[0]!.id).journal.closed).toMatchObject({ status: 'succeeded', stopReason: 'completed' });
    expect(summary.runId).toBe(rows[0]!.id);
  });

  // KNOWN BUG (reported): when the close's answer is lost (reset after the service applied it, or
  // a body cut short), the engine does not read the run (op 26) to learn that its close landed: it
  // warns "could not close run …; `svc runs recover` will", leaves the journal without its
  // `closed` record and exits 5 ("the service stayed unavailable") for a run that closed
  // succeeded. The event stream already resolves ambiguity this way (read seq, then resend);
  // src/dispatch/lifecycle/run-once.ts (the `catch` around `service.closeDispatchRun`) should do
  // the same: read the run; closed as sent → done, exit as the run deserves; still running →
  // close again. Remove `.fails` once fixed.
  test.fails.each([
    ['reset after the service applied it', { kind: 'reset-after' } as const],
    ['an answer cut short', { kind: 'truncate' } as const],
  ])('%s: the invocation itself learns its close landed (exit 0, journal closed)', async (_name, fault) => {
    const { w, summary } = await closeUnder(fault);
    expect(summary.exitCode).toBe(0);
    expect(journalOf(w.stateDir, summary.runId!).journal.closed).toMatchObject({ status: 'succeeded', stopReason: 'completed' });
  });

  test('an HTML 500 from a gateway (not applied, not retried: a write): the run is left for recover, which closes it with the decided close', async () => {
    const { w, summary } = await closeUnder({ kind: 'html-500' });
    const rows = runRows(w);
    expect(rows).toHaveLength(1);
    const runId = rows[0]!.id;
    const { journal } = journalOf(w.stateDir, runId);
    // The engine recorded the close it meant to send before sending it.
    expect(journal.closing).toEqual({ stopReason: 'completed', status: 'succeeded' });
    if (rows[0]!.status === 'running') {
      expect(summary.exitCode).not.toBe(0);
      const results = await recoverAll(w);
      expect(results.map((r) => r.action)).toEqual(['closed']);
    }
    expect(runRows(w)[0]).toMatchObject({ status: 'succeeded', stop_reason: 'completed' });
    expect(agreementProblems(w, runId)).toEqual([]);
    expect(journalOf(w.stateDir, runId).journal.closed).toMatchObject({ status: 'succeeded', stopReason: 'completed' });
  });
});
