import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { BodyChunker, utf8Cut } from '../../../src/dispatch/wire/leg-log.js';
import { EventStream } from '../../../src/dispatch/wire/event-stream.js';
import { Journal } from '../../../src/dispatch/wire/journal.js';
import { RunClosedError } from '../../../src/dispatch/ports.js';
import { FakeRunService } from './fake-run-service.js';

function setup(service = new FakeRunService(), extra: Partial<ConstructorParameters<typeof EventStream>[0]> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'svc-stream-'));
  const journal = Journal.open(join(dir, 'journal.jsonl'));
  const closed: RunClosedError[] = [];
  const stream = new EventStream({
    service,
    runId: 'run1',
    journal,
    baseSeq: 0,
    flushIntervalMs: 20,
    retryBaseMs: 5,
    retryMaxMs: 20,
    onClosed: (e) => closed.push(e),
    ...extra,
  });
  return { service, journal, stream, closed, dir };
}

const ev = (i: number) => ({ workItemKey: 'A-1', body: `line ${i}` });

describe('EventStream', () => {
  it('sends in order, in batches of at most 200, never two appends in flight', async () => {
    const { service, stream } = setup();
    service.appendDelayMs = 5;
    for (let i = 0; i < 1000; i++) stream.push(ev(i));
    expect(await stream.flush(10_000)).toBe(true);
    await stream.stop();
    expect(service.stored.map((e) => e.body)).toEqual(Array.from({ length: 1000 }, (_, i) => `line ${i}`));
    expect(Math.max(...service.batchSizes)).toBeLessThanOrEqual(200);
    expect(service.batchSizes.filter((n) => n === 200).length).toBeGreaterThanOrEqual(4);
    expect(service.maxInFlight).toBe(1);
  });

  it('flushes a partial batch after the interval without being asked', async () => {
    const { service, stream } = setup();
    stream.push(ev(1));
    // Nothing asks for a flush: only the interval can send it.
    await vi.waitUntil(() => service.stored.length === 1, { timeout: 5_000, interval: 5 });
    expect(service.batchSizes).toEqual([1]);
    await stream.stop();
  });

  it('after an ambiguous failure that stored the batch, reads seq and does not resend', async () => {
    const { service, stream, journal } = setup();
    service.appendFaults = ['ambiguous-stored'];
    for (let i = 0; i < 250; i++) stream.push(ev(i));
    expect(await stream.flush(5_000)).toBe(true);
    await stream.stop();
    expect(service.stored).toHaveLength(250);
    expect(new Set(service.stored.map((e) => e.body)).size).toBe(250);
    expect(service.reads).toBe(1);
    expect(journal.ackedSeq).toBe(250);
  });

  it('after an ambiguous failure that stored nothing, resends the whole batch once', async () => {
    const { service, stream } = setup();
    service.appendFaults = ['ambiguous-lost', 'unavailable'];
    for (let i = 0; i < 10; i++) stream.push(ev(i));
    expect(await stream.flush(5_000)).toBe(true);
    await stream.stop();
    expect(service.stored.map((e) => e.body)).toEqual(Array.from({ length: 10 }, (_, i) => `line ${i}`));
    expect(service.reads).toBe(1);
  });

  it('stops at once on 409 and reports RunClosedError; later events are journalled, not sent', async () => {
    const { service, stream, closed, journal } = setup();
    service.appendFaults = ['closed'];
    stream.push({ workItemKey: 'A-1', disposition: 'running' });
    expect(await stream.flush(2_000)).toBe(false);
    expect(closed).toHaveLength(1);
    expect(stream.failure).toBeInstanceOf(RunClosedError);
    const before = service.batchSizes.length;
    stream.push(ev(2));
    // Asked outright to send it, a closed stream still sends nothing.
    expect(await stream.flush(2_000)).toBe(false);
    expect(service.batchSizes.length).toBe(before);
    expect(journal.lastN).toBe(2);
    await stream.stop();
  });

  it('a non-retryable failure fails the stream instead of spinning', async () => {
    const failed: unknown[] = [];
    const { service, stream } = setup(undefined, { onFailed: (e) => failed.push(e) });
    service.appendFaults = ['invalid'];
    stream.push(ev(1));
    expect(await stream.flush(2_000)).toBe(false);
    expect(failed).toHaveLength(1);
    await stream.stop();
  });

  it('keeps memory bounded with a very slow append: the backlog waits in the journal', async () => {
    const { service, stream, journal } = setup(undefined, { maxBatch: 50 });
    service.appendDelayMs = 40;
    const big = 'x'.repeat(2048);
    for (let i = 0; i < 20_000; i++) stream.push({ workItemKey: 'A-1', body: `${i} ${big}` });
    // Only one batch is ever held in memory while 40 MB wait on disk: checked once a few batches
    // have gone out, not after a fixed time.
    await vi.waitUntil(() => service.batchSizes.length >= 4, { timeout: 10_000, interval: 5 });
    expect(stream.stats.maxHeld).toBeLessThanOrEqual(50);
    expect(stream.pending).toBeGreaterThan(15_000);
    await stream.stop();
    expect(service.maxInFlight).toBe(1);
    // The journal holds every event, in order, with local numbers.
    const lines = readFileSync(journal.path, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const evs = lines.filter((l) => l.t === 'ev');
    expect(evs).toHaveLength(20_000);
    expect(evs[19_999].n).toBe(20_000);
  });

  it('a reopened journal resumes after what was acknowledged', async () => {
    const { service, stream, journal } = setup();
    for (let i = 0; i < 5; i++) stream.push(ev(i));
    await stream.flush(2_000);
    await stream.stop();
    for (let i = 5; i < 8; i++) journal.append(ev(i));
    journal.close();
    const again = Journal.open(journal.path);
    expect([again.lastN, again.ackedN]).toEqual([8, 5]);
    const resumed = new EventStream({ service, runId: 'run1', journal: again, baseSeq: 0, flushIntervalMs: 10 });
    expect(await resumed.flush(2_000)).toBe(true);
    await resumed.stop();
    expect(service.stored.map((e) => e.body)).toEqual(Array.from({ length: 8 }, (_, i) => `line ${i}`));
  });
});

describe('BodyChunker', () => {
  it('cuts at most 16,384 bytes on UTF-8 boundaries and loses nothing', () => {
    const bodies: string[] = [];
    const chunker = new BodyChunker((b) => bodies.push(b));
    const text = 'a' + '€'.repeat(20_000) + '😀'.repeat(5000);
    for (let i = 0; i < text.length; i += 777) chunker.write(text.slice(i, i + 777));
    chunker.flush();
    expect(bodies.join('')).toBe(text);
    for (const b of bodies) {
      expect(Buffer.byteLength(b)).toBeLessThanOrEqual(16_384);
      expect(b).not.toContain('\uFFFD');
    }
  });

  it('ASCII output, and ASCII turning to other text and back, is cut the same way at full chunks', () => {
    const bodies: string[] = [];
    const chunker = new BodyChunker((b) => bodies.push(b), 100);
    const text = `${'x'.repeat(250)}${'é'.repeat(120)}${'y'.repeat(330)}`;
    for (let i = 0; i < text.length; i += 64) chunker.write(text.slice(i, i + 64));
    chunker.flush();
    expect(bodies.join('')).toBe(text);
    // Every body but the last is full: 100 bytes, or 99 where a 2-byte é would not fit.
    for (const b of bodies.slice(0, -1)) expect(Buffer.byteLength(b)).toBeGreaterThanOrEqual(99);
    for (const b of bodies) expect(Buffer.byteLength(b)).toBeLessThanOrEqual(100);
    expect(bodies.slice(0, 2)).toEqual(['x'.repeat(100), 'x'.repeat(100)]);
  });

  it('keeps what does not fill a chunk until flush, then sends it whole', () => {
    const bodies: string[] = [];
    const chunker = new BodyChunker((b) => bodies.push(b), 100);
    chunker.write('a'.repeat(150));
    expect(bodies).toEqual(['a'.repeat(100)]);
    chunker.write('b'.repeat(20));
    expect(bodies).toHaveLength(1);
    chunker.flush();
    expect(bodies).toEqual(['a'.repeat(100), `${'a'.repeat(50)}${'b'.repeat(20)}`]);
  });

  it('utf8Cut never splits a multi-byte character', () => {
    const buf = Buffer.from('ab€', 'utf8'); // € is 3 bytes
    expect(utf8Cut(buf, 3)).toBe(2);
    expect(utf8Cut(buf, 5)).toBe(5);
  });
});
