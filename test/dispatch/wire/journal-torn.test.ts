// A crash or a full disk can cut the journal's last line short. What is written after it must
// start on a line of its own: merged into the torn line it would be lost with it.
import { spawnSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Journal } from '../../../src/dispatch/wire/journal.js';
import { encodeEvents } from '../../../src/dispatch/wire/journal-reader.js';

const ev = (body: string) => ({ workItemKey: 'DEMO-1', body });

describe('a torn last journal line', () => {
  it('a record appended after reopening starts on a new line and is read back', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'svc-journal-')), 'journal.jsonl');
    const first = Journal.open(path);
    first.append(ev('one'));
    first.close();
    // The crash: half of the second event's line reached the disk.
    appendFileSync(path, '{"t":"ev","n":2,"at":"2026-01-01T00:00:00.000Z","ev":{"bo');
    const again = Journal.open(path);
    expect(again.lastN).toBe(1);
    again.append(ev('two'));
    again.markClosing('completed', 'succeeded');
    again.close();
    const reread = Journal.open(path);
    expect(reread.lastN).toBe(2);
    expect(reread.closing).toEqual({ stopReason: 'completed', status: 'succeeded' });
    expect(
      reread
        .reader(0)
        .read(10, 1 << 20)
        .map((e) => e.ev.body),
    ).toEqual(['one', 'two']);
    reread.close();
    const lines = readFileSync(path, 'utf8').split('\n');
    expect(lines[1]).toMatch(/"bo$/);
    expect(JSON.parse(lines[2]!)).toMatchObject({ t: 'ev', n: 2 });
  });

  it('a torn journal opened only to be read is not written', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'svc-journal-')), 'journal.jsonl');
    writeFileSync(path, '{"t":"ev","n":1,"at":"2026-01-01T00:00:00.000Z","ev":{"body":"one"}}\n{"t":"ev","n":2');
    const before = readFileSync(path, 'utf8');
    const j = Journal.open(path);
    expect(j.lastN).toBe(1);
    j.close();
    expect(readFileSync(path, 'utf8')).toBe(before);
  });

  it('a journal that ends with a newline gets no blank line', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'svc-journal-')), 'journal.jsonl');
    writeFileSync(path, '');
    const j = Journal.open(path);
    j.append(ev('one'));
    j.close();
    const k = Journal.open(path);
    k.append(ev('two'));
    k.close();
    expect(
      readFileSync(path, 'utf8')
        .split('\n')
        .filter((l) => l === ''),
    ).toEqual(['']);
  });

  it('records its agents and forgets the ones that ended', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'svc-journal-')), 'journal.jsonl');
    const j = Journal.open(path);
    j.agentStarted('DEMO-1', 4242, '123');
    j.agentStarted('DEMO-2', 4343, null);
    j.agentEnded(4242);
    j.close();
    expect([...Journal.open(path).agents.values()]).toEqual([{ key: 'DEMO-2', pgid: 4343, start: null }]);
  });
});

describe('events read as the journal holds them (what an append sends)', () => {
  it('readEncoded gives the same events as read, and the append body is their JSON', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'svc-journal-')), 'journal.jsonl');
    const j = Journal.open(path);
    for (const body of ['one', 'tw"o\n', 'ünï{}', '{"events":[]}']) j.append(ev(body));
    j.ack(1, 1);
    j.append({ workItemKey: 'DEMO-2', disposition: 'running', sessionBranch: 'svc/DEMO-2' });
    const parsed = j.reader(0).read(10, 1 << 20);
    const encoded = j.reader(0).readEncoded(10, 1 << 20);
    expect(encoded.map((e) => e.n)).toEqual(parsed.map((e) => e.n));
    expect(encoded.map((e) => JSON.parse(e.json.toString('utf8')))).toEqual(parsed.map((e) => e.ev));
    expect(JSON.parse(encodeEvents(encoded).toString('utf8'))).toEqual({ events: parsed.map((e) => e.ev) });
    // Into a reused, larger buffer holding an earlier batch: the same bytes.
    expect(encodeEvents(encoded, Buffer.alloc(1 << 16, 0x7b)).equals(encodeEvents(encoded))).toBe(true);
    // The same byte budget cuts both readers at the same event.
    const budget = readFileSync(path, 'utf8').split('\n')[0]!.length + 10;
    expect(
      j
        .reader(0)
        .readEncoded(10, budget)
        .map((e) => e.n),
    ).toEqual(
      j
        .reader(0)
        .read(10, budget)
        .map((e) => e.n),
    );
    j.close();
  });

  it("batch after batch through the reader's one buffer: every event once, in order, a line longer than the buffer too", () => {
    const path = join(mkdtempSync(join(tmpdir(), 'svc-journal-')), 'journal.jsonl');
    const j = Journal.open(path);
    const bodies = Array.from({ length: 60 }, (_, i) => (i === 30 ? 'x'.repeat(200_000) : `event ${i} `.repeat(i * 40)));
    bodies.forEach((b, i) => {
      j.append(ev(b));
      if (i % 7 === 0) j.ack(i + 1, i + 1);
    });
    const reader = j.reader(0);
    const seen: string[] = [];
    for (let batch = reader.readEncoded(5, 8 * 1024); batch.length > 0; batch = reader.readEncoded(5, 8 * 1024)) {
      // Read before the next batch: the entries' bytes are the reader's until then.
      seen.push(...(JSON.parse(encodeEvents(batch).toString('utf8')) as { events: { body: string }[] }).events.map((e) => e.body));
    }
    expect(seen).toEqual(bodies);
    j.close();
  });

  it('a torn line that happens to end in a brace is never sent as an event', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'svc-journal-')), 'journal.jsonl');
    const first = Journal.open(path);
    first.append(ev('one'));
    first.close();
    // Cut just after a brace inside the body: the line ends like a whole record, yet is not one.
    appendFileSync(path, '{"t":"ev","n":2,"at":"2026-01-01T00:00:00.000Z","ev":{"workItemKey":"DEMO-1","body":"function() {}');
    const again = Journal.open(path);
    again.append(ev('two'));
    again.close();
    for (const j of [Journal.open(path)]) {
      const sent = j
        .reader(0)
        .readEncoded(10, 1 << 20)
        .map((e) => JSON.parse(e.json.toString('utf8')).body);
      expect(sent).toEqual(['one', 'two']);
      j.close();
    }
  });
});

describe('several events in one write (appendAll)', () => {
  it('numbers them in order and reads them back as separate events', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'svc-journal-')), 'journal.jsonl');
    const j = Journal.open(path);
    j.append(ev('zero'));
    expect(j.appendAll([ev('one'), ev('two'), ev('x'.repeat(70_000))])).toBe(4);
    j.close();
    const again = Journal.open(path);
    expect(again.lastN).toBe(4);
    expect(
      again
        .reader(0)
        .read(10, 1 << 20)
        .map((e) => [e.n, e.ev.body!.slice(0, 4)]),
    ).toEqual([
      [1, 'zero'],
      [2, 'one'],
      [3, 'two'],
      [4, 'xxxx'],
    ]);
    again.close();
  });

  it('a write cut short by a full disk keeps the numbers of the lines that made it whole', (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-journal-full-'));
    const mount = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', dir], { encoding: 'utf8' });
    if (mount.status !== 0) {
      console.warn(`skipped: cannot mount a tmpfs here (${(mount.error?.message ?? mount.stderr).trim()}); this test needs root`);
      t.skip();
      return;
    }
    try {
      const path = join(dir, 'journal.jsonl');
      const j = Journal.open(path);
      // 8 lines of ~1 KB a write: the write that meets the end of the 64 KiB holds whole lines.
      const body = 'y'.repeat(1_000);
      let failure: unknown = null;
      for (let i = 0; i < 100 && failure === null; i++) {
        try {
          j.appendAll(Array.from({ length: 8 }, () => ev(body)));
        } catch (error) {
          failure = error;
        }
      }
      expect((failure as NodeJS.ErrnoException).code).toBe('ENOSPC');
      expect(j.lastN % 8).not.toBe(0);
      const whole = readFileSync(path, 'utf8')
        .split('\n')
        .filter((l) => l.endsWith('}}')).length;
      // The events whole in the file are numbered 1..lastN: the next one is not given a taken number.
      expect(j.lastN).toBe(whole);
      j.close();
      const again = Journal.open(path);
      const lastN = again.lastN;
      again.close();
      expect(lastN).toBe(whole);
    } finally {
      // A journal left open keeps the tmpfs busy: then only a lazy unmount lets the folder go.
      if (spawnSync('umount', [dir]).status !== 0) spawnSync('umount', ['-l', dir]);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
