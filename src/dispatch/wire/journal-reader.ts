// Reading the run journal back: its lines scanned in blocks, and the reader the event stream draws
// its batches from, each event's JSON as the journal holds it (see journal.ts for what is written).
import { readSync } from 'node:fs';
import type { CloseStatus, DispatchEventInput, StopReason } from '../../contract/types.js';

/** One line of the journal. */
export type JournalRecord =
  | { t: 'ev'; n: number; at: string; ev: DispatchEventInput }
  | { t: 'ack'; n: number; seq: number }
  | { t: 'close'; stopReason: StopReason; status: CloseStatus }
  | { t: 'closed'; stopReason: string | null; status: string | null }
  /** An agent started, leading process group `pgid` (its leader's start time tells pid reuse). */
  | { t: 'agent'; key: string; pgid: number; start: string | null }
  /** That agent's group was ended by svc. */
  | { t: 'agent-end'; pgid: number };

/** An agent the journal saw start and never saw end: after a kill -9 it may still run. */
export interface JournalAgent {
  key: string;
  pgid: number;
  start: string | null;
}

export interface JournalEntry {
  n: number;
  ev: DispatchEventInput;
}

/** An event as the journal holds it: `json` is the UTF-8 JSON of its `ev`, never decoded. */
export interface EncodedEntry {
  n: number;
  json: Buffer;
}

const BLOCK = 64 * 1024;

/**
 * Calls `visit` for each complete line from byte `start` (its bytes, valid only during the call),
 * with the byte offset just past it; stops when `visit` returns false. Reads in blocks, so memory
 * is one block plus the longest line.
 */
export function scanLineBytes(fd: number, start: number, visit: (line: Buffer, end: number) => boolean): void {
  let pos = start;
  let carry = Buffer.alloc(0);
  let carryStart = start;
  const block = Buffer.allocUnsafe(BLOCK);
  for (;;) {
    const read = readSync(fd, block, 0, BLOCK, pos);
    if (read === 0) return;
    pos += read;
    const data = carry.length ? Buffer.concat([carry, block.subarray(0, read)]) : block.subarray(0, read);
    let lineStart = 0;
    for (let i = data.indexOf(0x0a); i !== -1; i = data.indexOf(0x0a, lineStart)) {
      const line = data.subarray(lineStart, i);
      lineStart = i + 1;
      if (line.length > 0 && !visit(line, carryStart + lineStart)) return;
    }
    // Keep the unfinished tail (copied: `block` is reused by the next read).
    carry = Buffer.from(data.subarray(lineStart));
    carryStart += lineStart;
  }
}

/** Reads up to `length` bytes at `position` into `buf`; fewer only at the end of the file. */
function readAt(fd: number, buf: Buffer, length: number, position: number): number {
  let got = 0;
  for (let n = -1; got < length && n !== 0; got += n) n = readSync(fd, buf, got, length - got, position + got);
  return got;
}

export function scanLines(fd: number, start: number, visit: (line: string, end: number) => boolean): void {
  scanLineBytes(fd, start, (line, end) => visit(line.toString('utf8'), end));
}

// An event line is written as JSON.stringify({ t: 'ev', n, at, ev }): `,"ev":` first occurs where
// its `ev` begins (the fields before it are a word, a number and an ISO time), and the line ends
// with the record's closing brace.
const EV_KEY = Buffer.from(',"ev":');
const EV_HEAD = Buffer.from('{"t":"ev",');

/** The local number and the `ev` bytes of an event line; null for any other record. */
function encodedEvent(line: Buffer, suspect: boolean): EncodedEntry | null {
  if (suspect || !line.subarray(0, EV_HEAD.length).equals(EV_HEAD)) {
    // Another record (ack, close…), or an event line of some other shape: read it the slow way.
    const r = parse(line.toString('utf8'));
    return r?.t === 'ev' ? { n: r.n, json: Buffer.from(JSON.stringify(r.ev)) } : null;
  }
  const at = line.indexOf(EV_KEY);
  const head = at === -1 || line[line.length - 1] !== 0x7d ? null : parse(`${line.toString('latin1', 0, at)}}`);
  if (head?.t !== 'ev' || typeof head.n !== 'number') {
    const r = parse(line.toString('utf8'));
    return r?.t === 'ev' ? { n: r.n, json: Buffer.from(JSON.stringify(r.ev)) } : null;
  }
  return { n: head.n, json: line.subarray(at + EV_KEY.length, line.length - 1) };
}

export function parse(line: string): JournalRecord | null {
  try {
    return JSON.parse(line) as JournalRecord;
  } catch {
    // A torn last line after a crash: everything before it still counts.
    return null;
  }
}

/** Reads events in order from a byte cursor, never holding more than the asked-for batch. */
export class JournalReader {
  private pos = 0;

  constructor(
    private readonly fd: number,
    private afterN: number,
    private readonly tornEnds: ReadonlySet<number> = new Set(),
  ) {}

  /** Up to `maxEvents` events (and about `maxBytes` of them, at least one), in order. */
  read(maxEvents: number, maxBytes: number): JournalEntry[] {
    const out: JournalEntry[] = [];
    let bytes = 0;
    scanLines(this.fd, this.pos, (line, end) => {
      const r = parse(line);
      if (r?.t === 'ev' && r.n > this.afterN) {
        const size = Buffer.byteLength(line);
        if (out.length > 0 && bytes + size > maxBytes) return false;
        out.push({ n: r.n, ev: r.ev });
        bytes += size;
        this.afterN = r.n;
      }
      this.pos = end;
      return out.length < maxEvents;
    });
    return out;
  }

  /** The reader's own buffer: encoded entries point into it, so each batch costs no new memory. */
  private buf: Buffer = Buffer.alloc(0);

  /**
   * The same batch as `read`, with each event's JSON as the journal holds it: sending a batch
   * then parses and re-encodes nothing, and holds its bodies as bytes outside the JS heap. The
   * entries' bytes are the reader's: valid until its next `readEncoded`.
   */
  readEncoded(maxEvents: number, maxBytes: number): EncodedEntry[] {
    const out: EncodedEntry[] = [];
    let bytes = 0;
    let want = maxBytes + BLOCK;
    for (;;) {
      if (this.buf.length < want) this.buf = Buffer.allocUnsafeSlow(want);
      const got = readAt(this.fd, this.buf, want, this.pos);
      const data = this.buf.subarray(0, got);
      let lineStart = 0;
      for (let i = data.indexOf(0x0a); i !== -1; i = data.indexOf(0x0a, lineStart)) {
        const line = data.subarray(lineStart, i);
        const end = this.pos + i + 1;
        if (line.length > 0) {
          // A torn line may still end like a whole one: it is parsed whole (and so skipped).
          const e = encodedEvent(line, this.tornEnds.has(end - 1));
          if (e && e.n > this.afterN) {
            if (out.length > 0 && bytes + line.length > maxBytes) {
              this.pos += lineStart;
              return out;
            }
            out.push(e);
            bytes += line.length;
            this.afterN = e.n;
          }
        }
        lineStart = i + 1;
        if (out.length >= maxEvents) {
          this.pos += lineStart;
          return out;
        }
      }
      this.pos += lineStart;
      // The end of the file, or a full buffer already holding a batch: done. A line longer than
      // the buffer: a larger one. Else the buffer held only records that are not events: read on.
      if (got < want || (lineStart > 0 && out.length > 0)) return out;
      if (lineStart === 0) want *= 2;
    }
  }
}

const EVENTS_OPEN = Buffer.from('{"events":[');
const EVENTS_CLOSE = Buffer.from(']}');

/**
 * The body of appendDispatchEvents, `{"events":[…]}`, from the events' JSON bytes, written into `into` when it
 * is large enough (the stream reuses one buffer: a batch is sent only after the last one settled).
 */
export function encodeEvents(entries: readonly EncodedEntry[], into?: Buffer): Buffer {
  let size = EVENTS_OPEN.length + EVENTS_CLOSE.length + Math.max(0, entries.length - 1);
  for (const e of entries) size += e.json.length;
  const out = into && into.length >= size ? into : Buffer.allocUnsafeSlow(size);
  let at = EVENTS_OPEN.copy(out, 0);
  entries.forEach((e, i) => {
    if (i > 0) at = out.writeUInt8(0x2c, at);
    at += e.json.copy(out, at);
  });
  EVENTS_CLOSE.copy(out, at);
  return out.subarray(0, size);
}
