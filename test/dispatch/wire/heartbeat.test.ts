import { describe, expect, it, vi } from 'vitest';
import { startHeartbeat } from '../../../src/dispatch/wire/heartbeat.js';
import type { RunClosedError } from '../../../src/dispatch/ports.js';
import { FakeRunService } from './fake-run-service.js';

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('heartbeat', () => {
  it('beats on its own timer even while the event loop is otherwise busy with awaits', async () => {
    const service = new FakeRunService();
    const hb = startHeartbeat({ service, runId: 'r', intervalMs: 20, onClosed: () => {} });
    // Waits on the beats themselves: a fixed 130 ms saw only 2 on a loaded machine.
    await vi.waitFor(() => expect(service.beats).toBeGreaterThanOrEqual(4), { timeout: 5_000, interval: 10 });
    await hb.stop();
    const after = service.beats;
    await wait(60);
    expect(service.beats).toBe(after);
  });

  it('retries a failed beat soon, and stops for good on 409', async () => {
    const service = new FakeRunService();
    service.heartbeatFaults = ['unavailable', 'closed'];
    const closed: RunClosedError[] = [];
    const hb = startHeartbeat({ service, runId: 'r', intervalMs: 1000, retryMs: 10, onClosed: (e) => closed.push(e) });
    // The first beat comes after the interval; the retry after it within retryMs, then the 409.
    // Awaited, not timed: on a loaded machine the timers fire late, and late is not wrong.
    const t0 = Date.now();
    await vi.waitFor(() => expect(closed).toHaveLength(1), { timeout: 10_000, interval: 20 });
    // Soon: the retry did not wait for the next interval (that one would come at 2000 ms).
    const took = Date.now() - t0;
    expect(took).toBeGreaterThanOrEqual(990);
    expect(took).toBeLessThan(1900);
    expect(hb.stats.failures).toBe(2);
    await wait(50);
    expect(hb.stats.failures).toBe(2);
    await hb.stop();
  });

  it('gives up once beats have failed for longer than giveUpAfterMs (--max-wait), and says so once', async () => {
    const service = new FakeRunService();
    service.heartbeatFaults = Array.from({ length: 100 }, () => 'unavailable' as const);
    const failed: unknown[] = [];
    const hb = startHeartbeat({ service, runId: 'r', intervalMs: 10, retryMs: 10, giveUpAfterMs: 60, onClosed: () => {}, onFailed: (e) => failed.push(e) });
    await wait(250);
    expect(failed).toHaveLength(1);
    const failures = hb.stats.failures;
    expect(failures).toBeGreaterThanOrEqual(3);
    await wait(50);
    // Beating stopped for good.
    expect(hb.stats.failures).toBe(failures);
    await hb.stop();
  });
});
