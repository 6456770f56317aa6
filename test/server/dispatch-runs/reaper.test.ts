// The reaper of silent local runs, its race with a client close, and the 30-day retention of
// event bodies it enforces on the same tick.
import { afterEach, expect, test, vi } from 'vitest';
import type { DispatchRun } from '../../../src/contract/types.js';
import { reapOnce } from '../../../src/server/dispatch-runs/index.js';
import { moves, startHarness, type Harness } from './harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.svc.close();
  h = undefined;
});

const read = async (id: string): Promise<DispatchRun> => (await h!.svc.call('GET', `/dispatch-runs/${id}`)).body;

test('a silent local run is closed abandoned (failed) with its legs settled; hosted runs are never reaped', async () => {
  // Real time here: the reaper's own timer and clock, with a short silence limit. (Beats that keep
  // a run alive are tested on a manual clock below, where no scheduling delay can make them late.)
  h = await startHarness({ now: () => new Date(), config: { reapAfterMs: 300, reapEveryMs: 25 } });
  const [a, b] = h.items(2);
  const silent = await h.open({ cards: [{ workItemKey: a }, { workItemKey: b }] });
  await h.svc.call('POST', `/dispatch-runs/${silent.id}/events`, { body: { events: moves('running', a) } });
  const hosted = await h.open({ origin: 'hosted' });
  await vi.waitFor(async () => expect((await read(silent.id)).status).toBe('failed'), { timeout: 5_000, interval: 50 });
  const reaped = await read(silent.id);
  expect(reaped).toMatchObject({ status: 'failed', stopReason: 'abandoned' });
  expect(reaped.endedAt).not.toBeNull();
  expect(reaped.cards.map((x) => x.disposition)).toEqual(['failed', 'not_reached']);
  expect((await read(hosted.id)).status).toBe('running');

  // After a reap the run is terminal for its client as well.
  for (const [path, body] of [
    ['close', { stopReason: 'completed' }],
    ['heartbeat', undefined],
    ['events', { events: [{}] }],
  ] as const) {
    const res = await h.svc.call('POST', `/dispatch-runs/${silent.id}/${path}`, { body });
    expect(res.status, path).toBe(409);
    expect(res.body.code).toBe('RUN_CLOSED');
  }
});

test("silence is counted from the open, then from the last beat, on the server's clock", async () => {
  h = await startHarness({ config: { reapAfterMs: 5 * 60_000, reapEveryMs: 10 } });
  const run = await h.open();
  // A tick of the reaper at the clock's time, the one its timer runs: nothing to reap yet.
  const tick = () => reapOnce(h!.svc.db, { reapAfterMs: 5 * 60_000 }, h!.clock.now());
  h.clock.advance(4 * 60_000);
  expect(tick()).toEqual([]);
  expect((await read(run.id)).status).toBe('running');
  await h.svc.call('POST', `/dispatch-runs/${run.id}/heartbeat`);
  h.clock.advance(4 * 60_000);
  expect(tick()).toEqual([]);
  expect((await read(run.id)).status).toBe('running');
  // Past the limit since the beat: the reaper's own timer closes it.
  h.clock.advance(60_001);
  await vi.waitFor(async () => expect((await read(run.id)).stopReason).toBe('abandoned'), { timeout: 2_000, interval: 20 });
});

test('a close and a reap settle the run exactly once: whichever comes second loses', async () => {
  h = await startHarness({ config: { reapAfterMs: 60_000, reapEveryMs: 3_600_000 } });
  const [a] = h.items(1);
  const first = await h.open({ cards: [{ workItemKey: a }] });
  h.clock.advance(61_000);
  // The client's close wins: the reaper then finds nothing to close.
  expect((await h.svc.call('POST', `/dispatch-runs/${first.id}/close`, { body: { stopReason: 'completed' } })).status).toBe(200);
  expect(reapOnce(h.svc.db, { reapAfterMs: 60_000 }, h.clock.now())).toEqual([]);
  expect(await read(first.id)).toMatchObject({ status: 'succeeded', stopReason: 'completed' });

  // The reaper wins: the client's close is the 409 of a terminal run.
  const second = await h.open({ cards: [{ workItemKey: a }] });
  h.clock.advance(61_000);
  expect(reapOnce(h.svc.db, { reapAfterMs: 60_000 }, h.clock.now())).toEqual([second.id]);
  const lost = await h.svc.call('POST', `/dispatch-runs/${second.id}/close`, { body: { stopReason: 'completed' } });
  expect(lost.status).toBe(409);
  expect(lost.body.code).toBe('RUN_CLOSED');
  expect(await read(second.id)).toMatchObject({ status: 'failed', stopReason: 'abandoned' });
});

test('event bodies are cleared 30 days after their event; the events and their seq stay', async () => {
  h = await startHarness({ config: { reapEveryMs: 10 } });
  const run = await h.open({ origin: 'hosted' });
  const append = (body: string) => h!.svc.call('POST', `/dispatch-runs/${run.id}/events`, { body: { events: [{ body }] } });
  await append('old log');
  h.clock.advance(20 * 24 * 3_600_000);
  await append('newer log');
  h.clock.advance(10 * 24 * 3_600_000 + 1);
  const bodies = () =>
    h!.svc.db.prepare('SELECT seq, body FROM dispatch_events WHERE run_id = ? ORDER BY seq').all(run.id) as { seq: number; body: string | null }[];
  await vi.waitFor(() => expect(bodies()[0]!.body).toBeNull(), { timeout: 2_000, interval: 20 });
  expect(bodies()).toEqual([
    { seq: 1, body: null },
    { seq: 2, body: 'newer log' },
  ]);
  expect((await read(run.id)).seq).toBe(2);
});
