// --max-wait bounds a whole engine loop, the client's own retries included (docs/dispatch.md#the-wire): the
// event stream and the heartbeat on top of the real transport, against a service that answers
// only 503, wait at most --max-wait in all, never --max-wait in the transport and again on top.
// The service is a loopback server that answers every request 503, and every wait goes through an
// injected sleep that moves a fake clock.
import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, test, vi } from 'vitest';
import { createApiClient } from '../../../src/api/index.js';
import { dispatchServiceOf } from '../../../src/dispatch/wire/service.js';
import { EventStream } from '../../../src/dispatch/wire/event-stream.js';
import { startHeartbeat } from '../../../src/dispatch/wire/heartbeat.js';
import { Journal } from '../../../src/dispatch/wire/journal.js';

const MAX_WAIT = 60_000;
const PAT = 'svc_pat_0123456789abcdefABCDEF0123456789';

let requests = 0;
let server: Server;
let baseUrl: string;
beforeAll(async () => {
  server = createServer((_req, res) => {
    requests++;
    res.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'down for maintenance', code: 'UNAVAILABLE' }));
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((ok) => server.close(() => ok())));
beforeEach(() => {
  requests = 0;
});

/** One fake clock for the client and the engine; each loop's waits recorded apart. */
function fakeTime() {
  let now = 1_700_000_000_000;
  const waits = { client: [] as number[], engine: [] as number[] };
  const sleeper = (into: number[]) => async (ms: number) => {
    into.push(ms);
    now += ms;
  };
  return { now: () => now, waits, clientSleep: sleeper(waits.client), engineSleep: sleeper(waits.engine) };
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

function client(time: ReturnType<typeof fakeTime>) {
  // The service answered once before (a 503 is an answer), so --max-wait governs, not first contact.
  return createApiClient({ baseUrl, token: PAT, maxWaitMs: MAX_WAIT, sleep: time.clientSleep, now: time.now, random: () => 0.999 });
}

describe('one --max-wait for an engine loop and the client inside it', () => {
  test('the client alone waits up to --max-wait for one call', async () => {
    const time = fakeTime();
    await expect(client(time).getDispatchRun('run_1')).rejects.toMatchObject({ status: 503 });
    expect(sum(time.waits.client)).toBeGreaterThan(MAX_WAIT / 2);
    expect(sum(time.waits.client)).toBeLessThanOrEqual(MAX_WAIT);
  });

  test('an event batch that cannot be delivered fails the stream within --max-wait, client retries included', async () => {
    const time = fakeTime();
    const journal = Journal.open(join(mkdtempSync(join(tmpdir(), 'svc-maxwait-')), 'journal.jsonl'));
    let failed: unknown = null;
    const stream = new EventStream({
      service: dispatchServiceOf(client(time)),
      runId: 'run_1',
      journal,
      baseSeq: 0,
      flushIntervalMs: 5,
      giveUpAfterMs: MAX_WAIT,
      random: () => 0.999,
      pacing: { sleep: time.engineSleep, now: time.now },
      onFailed: (e) => {
        failed = e;
      },
    });
    stream.push({ workItemKey: 'A-1', disposition: 'running' });
    await vi.waitFor(() => expect(failed).not.toBeNull(), { timeout: 5_000 });
    await stream.stop();
    expect(failed).toMatchObject({ status: 503 });
    const total = sum(time.waits.client) + sum(time.waits.engine);
    expect(total).toBeLessThanOrEqual(MAX_WAIT);
    expect(total).toBeGreaterThan(MAX_WAIT / 2);
    expect(requests).toBeGreaterThan(1);
  });

  test('a heartbeat outage gives up within --max-wait, client retries included', async () => {
    const time = fakeTime();
    let failed: unknown = null;
    const interval = 1_000;
    const hb = startHeartbeat({
      service: dispatchServiceOf(client(time)),
      runId: 'run_1',
      intervalMs: interval,
      retryMs: 1_000,
      giveUpAfterMs: MAX_WAIT,
      pacing: { sleep: time.engineSleep, now: time.now },
      onClosed: () => {},
      onFailed: (e) => {
        failed = e;
      },
    });
    await vi.waitFor(() => expect(failed).not.toBeNull(), { timeout: 5_000 });
    await hb.stop();
    expect(failed).toMatchObject({ status: 503 });
    // The first engine wait is the interval before the first beat: no outage yet.
    expect(time.waits.engine[0]).toBe(interval);
    const outage = sum(time.waits.client) + sum(time.waits.engine.slice(1));
    expect(outage).toBeLessThanOrEqual(MAX_WAIT);
    expect(outage).toBeGreaterThan(MAX_WAIT / 2);
  });
});
