// The leg's log (src/dispatch/wire/leg-log.ts), an agent's pipe into it, and the stream tick that
// drives it: every byte in the local log, tokens redacted in the log and the bodies, bodies ≤ 16 KiB.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { BodyChunker } from '../../../src/dispatch/wire/leg-log.js';
import { EventStream } from '../../../src/dispatch/wire/event-stream.js';
import { Journal } from '../../../src/dispatch/wire/journal.js';
import { LegLog, type BodySink, type LegLogOptions, type PipeOptions } from '../../../src/dispatch/wire/leg-log.js';
import { REDACTED } from '../../../src/dispatch/redact.js';
import { FakeRunService } from '../wire/fake-run-service.js';

const SECRET = 'run-secret-0123456789abcdef';
const SHAPE = 'ghp_ABCDEFGHIJKLMNOPQRST0123';

function stream(flushIntervalMs = 20) {
  const dir = mkdtempSync(join(tmpdir(), 'svc-pipe-'));
  const service = new FakeRunService();
  const s = new EventStream({ service, runId: 'run1', journal: Journal.open(join(dir, 'journal.jsonl')), baseSeq: 0, flushIntervalMs });
  return {
    dir,
    service,
    stream: s,
    bodies: { stream: s, workItemKey: 'A-1' } satisfies BodySink,
  };
}

/** A sink that keeps the bodies the log hands over, and hears of the tick through `gather`. */
function keep(got: string[], gather: BodySink['stream']['gather'] = () => () => undefined): BodySink {
  return { stream: { pushAll: (evs) => got.push(...evs.map((ev) => ev.body!)), gather } };
}

/** A leg's log with one agent's pipe into it, closed with the log. */
function agentOutput(o: LegLogOptions & PipeOptions) {
  const log = new LegLog(o);
  const pipe = log.pipe(o);
  return { write: pipe.write, close: () => log.close(), log };
}

/** Feeds `bytes` to the pipe in pieces of `size`. */
function feed(out: { write(chunk: Buffer, from?: 'stdout' | 'stderr'): void }, bytes: Buffer, size: number) {
  for (let at = 0; at < bytes.length; at += size) out.write(bytes.subarray(at, at + size), 'stdout');
}

describe('the leg log, as an agent writes to it', () => {
  it('puts every line in the log and the bodies, tokens redacted in both, bodies at most 16 KiB', async () => {
    const { dir, service, stream: s, bodies } = stream();
    const log = join(dir, 'A-1.log');
    const out = agentOutput({ logFile: log, secrets: () => [SECRET], live: false, bodies });
    const lines = Array.from({ length: 3000 }, (_, i) => (i % 500 === 7 ? `line ${i} token ${SECRET} and ${SHAPE}\n` : `line ${i}: ünïcödé ✓ 😀 output\n`));
    // Pieces of 777 bytes cut through tokens, lines and characters alike.
    feed(out, Buffer.from(lines.join('')), 777);
    out.close();
    expect(await s.flush(10_000)).toBe(true);
    await s.stop();
    const expected = lines.join('').replaceAll(SECRET, REDACTED).replaceAll(SHAPE, REDACTED);
    expect(readFileSync(log, 'utf8')).toBe(expected);
    const stored = service.stored.map((e) => e.body!);
    expect(stored.join('')).toBe(expected);
    for (const b of stored) expect(Buffer.byteLength(b)).toBeLessThanOrEqual(16_384);
    expect(stored.filter((b) => Buffer.byteLength(b) > 16_000).length).toBeGreaterThan(5);
  });

  it('a token split between writes of stdout, with stderr between them, leaks from neither stream', () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-pipe-'));
    const got: string[] = [];
    const out = agentOutput({
      logFile: join(dir, 'l.log'),
      secrets: () => [SECRET],
      live: false,
      bodies: keep(got),
    });
    out.write(Buffer.from(`a ${SECRET.slice(0, 9)}`), 'stdout');
    out.write(Buffer.from('err line\n'), 'stderr');
    out.write(Buffer.from(`${SECRET.slice(9)} b\n`), 'stdout');
    out.close();
    const log = readFileSync(join(dir, 'l.log'), 'utf8');
    for (const text of [log, got.join('')]) {
      expect(text).not.toContain(SECRET.slice(0, 9));
      expect(text).toContain(`a ${REDACTED} b\n`);
      expect(text).toContain('err line\n');
    }
  });

  it('redacts a secret minted after the pipe opened (live secrets)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-pipe-'));
    const live: string[] = [];
    const got: string[] = [];
    const out = agentOutput({
      logFile: join(dir, 'l.log'),
      secrets: () => live,
      live: true,
      bodies: keep(got),
    });
    out.write(Buffer.from('before\n'), 'stdout');
    live.push('fresh-git-token-abcdef123456');
    out.write(Buffer.from('pushing with fresh-git-token-abcdef123456 now\n'), 'stdout');
    out.close();
    for (const text of [readFileSync(join(dir, 'l.log'), 'utf8'), got.join('')]) expect(text).toBe(`before\npushing with ${REDACTED} now\n`);
  });

  it('hands stdout to onStdout as it came, before redaction, and stderr not at all', () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-pipe-'));
    const seen: string[] = [];
    const out = agentOutput({ logFile: join(dir, 'l.log'), secrets: () => [SECRET], live: false, onStdout: (c) => void seen.push(c.toString()) });
    out.write(Buffer.from(`out ${SECRET}\n`), 'stdout');
    out.write(Buffer.from('err\n'), 'stderr');
    out.close();
    expect(seen).toEqual([`out ${SECRET}\n`]);
    expect(readFileSync(join(dir, 'l.log'), 'utf8')).toBe(`out ${REDACTED}\nerr\n`);
  });

  it('gives its part-filled body at the stream tick, and leaves the tick when closed', () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-pipe-'));
    const got: string[] = [];
    let tick: (() => void) | null = null;
    const sink = keep(got, (f) => {
      tick = f;
      return () => {
        tick = null;
      };
    });
    const out = agentOutput({ logFile: join(dir, 'l.log'), secrets: () => [], live: false, bodies: sink });
    out.write(Buffer.from('short line\n'), 'stdout');
    expect(got).toEqual([]);
    tick!();
    expect(got).toEqual(['short line\n']);
    out.close();
    expect(tick).toBeNull();
    out.close();
    expect(got).toEqual(['short line\n']);
  });

  it("is the one sink of the leg: svc's notes, a step's pipe and the agent's, in order, redacted alike, one body stream", () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-pipe-'));
    const got: string[] = [];
    const log = new LegLog({
      logFile: join(dir, 'l.log'),
      secrets: () => [SECRET],
      live: false,
      bodies: keep(got),
    });
    log.note(`setup: make TOKEN=${SECRET}`);
    const tail: string[] = [];
    const step = log.pipe({ onText: (t) => void tail.push(t) });
    step.write(Buffer.from(`step says ${SECRET.slice(0, 5)}`));
    step.write(Buffer.from(`${SECRET.slice(5)}\n`), 'stderr');
    step.write(Buffer.from(`${SECRET.slice(5)} done\n`));
    step.end();
    const agent = log.pipe();
    agent.write(Buffer.from('agent line\n'));
    log.note('blocked 127.0.0.3:80 (kernel)');
    // The agent's pipe is still open: closing the log ends it, what it held back included.
    agent.write(Buffer.from(`half ${SECRET.slice(0, 4)}`));
    log.close();
    log.note('after close: dropped');
    const expected = `[svc] setup: make TOKEN=${REDACTED}\n${SECRET.slice(5)}\nstep says ${REDACTED} done\nagent line\n[svc] blocked 127.0.0.3:80 (kernel)\nhalf ${SECRET.slice(0, 4)}`;
    expect(readFileSync(join(dir, 'l.log'), 'utf8')).toBe(expected);
    expect(got.join('')).toBe(expected);
    expect(tail.join('')).toBe(`${SECRET.slice(5)}\nstep says ${REDACTED} done\n`);
  });
});

describe('EventStream ticks', () => {
  it('sends what a producer hands over at a tick in that tick, not one interval later', async () => {
    const { service, stream: s } = stream(20);
    let ticks = 0;
    let pushed = 0;
    s.gather(() => {
      ticks++;
      if (pushed === 0) pushed = s.push({ workItemKey: 'A-1', body: 'gathered' });
    });
    await vi.waitUntil(() => service.stored.length === 1, { timeout: 5_000, interval: 2 });
    // Stored after the first tick: the event did not wait for a second one.
    expect(ticks).toBe(1);
    await s.stop();
  });
});

describe('BodyChunker on bytes that are not UTF-8', () => {
  it('keeps every body at most 16 KiB once the bad bytes become U+FFFD', () => {
    const bodies: string[] = [];
    const chunker = new BodyChunker((b) => bodies.push(b));
    chunker.write(Buffer.alloc(40_000, 0xff));
    chunker.write(Buffer.from('tail\n'));
    chunker.flush();
    for (const b of bodies) expect(Buffer.byteLength(b)).toBeLessThanOrEqual(16_384);
    expect(bodies.join('')).toBe(`${'\uFFFD'.repeat(40_000)}tail\n`);
  });
});

describe('a tick whose producer cannot journal', () => {
  it('leaves the stream delivering what the journal holds, with no unhandled rejection', async () => {
    const { service, stream: s } = stream(20);
    s.push({ workItemKey: 'A-1', body: 'before' });
    let ticks = 0;
    s.gather(() => {
      ticks++;
      throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
    });
    s.push({ workItemKey: 'A-1', body: 'after' });
    await vi.waitUntil(() => ticks >= 2 && service.stored.length === 2, { timeout: 5_000, interval: 5 });
    expect(service.stored.map((e) => e.body)).toEqual(['before', 'after']);
    await s.stop();
  });
});
