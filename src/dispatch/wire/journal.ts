// The run journal: an append-only JSON-lines file. Every event is written here, with a local
// sequence number, BEFORE it is sent; each successful append adds an `ack` record with the server's
// seq. Pending events live here rather than in memory, so a chatty agent and a slow service cost
// disk, not heap; and after a crash `svc runs recover` finds exactly what was not acknowledged.
import { closeSync, existsSync, fstatSync, fsyncSync, openSync, readSync, writeSync } from 'node:fs';
import type { CloseStatus, DispatchEventInput, StopReason } from '../../contract/types.js';
import { JournalReader, parse, scanLines, type JournalAgent, type JournalRecord } from './journal-reader.js';

export { JournalReader, type EncodedEntry, type JournalAgent, type JournalEntry, type JournalRecord } from './journal-reader.js';

/** ES2024's String.prototype.isWellFormed (Node 20+), beyond the TypeScript lib this project targets. */
interface WellFormed {
  isWellFormed(): boolean;
}

/** Control characters other than the newline: text holding one is escaped by JSON.stringify. */
const CONTROL = /[\x00-\x09\x0b-\x1f]/;

/**
 * `text` as it stands between the quotes of its JSON, when its newlines are all that need escaping
 * (log output, mostly); null for text with quotes, backslashes, other control characters or lone
 * surrogates. Node 22's JSON.stringify escapes about 400 MB/s, most of a --send-logs run's CPU;
 * replaceAll does this case about 5× faster.
 */
function quickEscape(text: string): string | null {
  if (text.includes('"') || text.includes('\\') || CONTROL.test(text) || !(text as unknown as WellFormed).isWellFormed()) return null;
  return text.replaceAll('\n', '\\n');
}

/** `JSON.stringify(text)`, the same string, the quick way when it can be. */
export function jsonText(text: string): string {
  const quick = quickEscape(text);
  return quick === null ? JSON.stringify(text) : `"${quick}"`;
}

/** Bodies shorter than this are stringified with their record: the quick way is not worth it. */
const LONG_BODY = 256;
/** How JSON.stringify ends a record whose event ends with an empty body (BodyChunker puts `body` last). */
const EMPTY_BODY_END = '"body":""}}';
const BODY_END = Buffer.from('"}}');

export class Journal {
  private fd: number;
  /** Lines are encoded into this buffer, grown to the longest, and written from it. */
  private line = Buffer.allocUnsafeSlow(64 * 1024);
  /** Local number of the last event written. */
  lastN = 0;
  /** Highest local number the service acknowledged, and the server seq it answered then. */
  ackedN = 0;
  ackedSeq: number | null = null;
  /** The close the client meant to send, and whether the service confirmed the run closed. */
  closing: { stopReason: StopReason; status: CloseStatus } | null = null;
  closed = false;
  /** Agents started and not recorded as ended, by process group. */
  readonly agents = new Map<number, JournalAgent>();

  private constructor(readonly path: string) {
    const fresh = !existsSync(path);
    this.fd = openSync(path, 'a+', 0o600);
    if (!fresh) {
      this.load();
      this.torn = this.endsTorn();
      if (this.torn) this.tornEnds.add(fstatSync(this.fd).size);
    }
  }

  /**
   * A crash (or a full disk) can leave the last line cut short: the next record must start on a
   * line of its own, or it would merge into the torn one and be lost with it. Only noted here
   * (the newline goes with the next write), so a journal opened to be read is never written.
   */
  private endsTorn(): boolean {
    const size = fstatSync(this.fd).size;
    if (size === 0) return false;
    const last = Buffer.alloc(1);
    readSync(this.fd, last, 0, 1, size - 1);
    return last[0] !== 0x0a;
  }

  /** Opens (creating) the journal at `path`, reading back its counters if it exists. */
  static open(path: string): Journal {
    return new Journal(path);
  }

  private load(): void {
    scanLines(this.fd, 0, (line, end) => {
      const r = parse(line);
      if (!r) {
        this.tornEnds.add(end - 1);
        return true;
      }
      if (r.t === 'ev') this.lastN = Math.max(this.lastN, r.n);
      else if (r.t === 'ack' && r.n >= this.ackedN) {
        this.ackedN = r.n;
        this.ackedSeq = r.seq;
      } else if (r.t === 'close') this.closing = { stopReason: r.stopReason, status: r.status };
      else if (r.t === 'closed') this.closed = true;
      else if (r.t === 'agent') this.agents.set(r.pgid, { key: r.key, pgid: r.pgid, start: r.start });
      else if (r.t === 'agent-end') this.agents.delete(r.pgid);
      return true;
    });
  }

  /** The last line is unfinished (a write failed part-way, here or before a crash). */
  private torn = false;
  /** Where each torn line ends: a reader judges those lines whole, never by their shape alone. */
  private readonly tornEnds = new Set<number>();

  private noteTorn(): void {
    this.torn = true;
    try {
      this.tornEnds.add(fstatSync(this.fd).size);
    } catch {
      // The size is unknown: that line is still read the slow way if it fails to parse.
    }
  }

  /**
   * Room after `at` for `chars` UTF-16 units of text (at most 3 bytes of UTF-8 each) and two
   * newlines; the bytes before `at` (earlier records of the same write) are kept.
   */
  private room(at: number, chars: number): Buffer {
    const need = at + chars * 3 + 2;
    if (this.line.length < need) {
      const grown = Buffer.allocUnsafeSlow(Math.max(need, this.line.length * 2));
      this.line.copy(grown, 0, 0, at);
      this.line = grown;
    }
    return this.line;
  }

  /**
   * The record's line into `this.line` from `at`; returns where it ends. Exactly JSON.stringify's
   * text; a long body that needs only its newlines escaped is written in its own piece (no copy
   * of the record's whole text is made).
   */
  private encode(record: JournalRecord, at: number): number {
    const body = record.t === 'ev' && typeof record.ev.body === 'string' && record.ev.body.length >= LONG_BODY ? record.ev.body : null;
    const quick = body === null ? null : quickEscape(body);
    const head = quick === null || record.t !== 'ev' ? '' : JSON.stringify({ ...record, ev: { ...record.ev, body: '' } });
    if (quick === null || !head.endsWith(EMPTY_BODY_END)) {
      const json = JSON.stringify(record);
      return at + this.room(at, json.length).write(json, at, 'utf8');
    }
    const line = this.room(at, head.length + quick.length);
    // The head up to `"body":"`, the escaped body, then `"}}`.
    let end = at + line.write(head, at, 'utf8') - EMPTY_BODY_END.length + '"body":"'.length;
    end += line.write(quick, end, 'utf8');
    return end + BODY_END.copy(line, end);
  }

  private write(record: JournalRecord): void {
    this.writeAll([record]);
  }

  /**
   * The records' lines in one write (a burst of agent output is one system call, not one per
   * 16 KiB body). A write that fails part-way throws, saying in the error's `whole` how many of
   * the lines are complete in the file.
   */
  private writeAll(records: readonly JournalRecord[]): void {
    let size = this.torn ? 1 : 0;
    const ends: number[] = [];
    for (const record of records) {
      size = this.encode(record, size);
      this.line[size++] = 0x0a;
      ends.push(size);
    }
    if (this.torn) this.line[0] = 0x0a;
    let written: number;
    try {
      written = writeSync(this.fd, this.line, 0, size);
    } catch (error) {
      this.noteTorn();
      throw error;
    }
    if (written < size) {
      this.noteTorn();
      const whole = ends.filter((end) => end <= written).length;
      throw Object.assign(new Error(`ENOSPC: no space left on device, write '${this.path}'`), { code: 'ENOSPC', whole });
    }
    this.torn = false;
  }

  /** Writes an event and returns its local number. Synchronous: order is the call order. */
  append(ev: DispatchEventInput, at: Date = new Date()): number {
    return this.appendAll([ev], at);
  }

  /**
   * Writes events in one write and returns the local number of the last. When the write fails
   * part-way, the events whose lines are whole in the file keep their numbers (the next event is
   * numbered after them) and the error is thrown.
   */
  appendAll(evs: readonly DispatchEventInput[], at: Date = new Date()): number {
    const stamp = at.toISOString();
    const first = this.lastN + 1;
    try {
      this.writeAll(evs.map((ev, i) => ({ t: 'ev', n: first + i, at: stamp, ev })));
    } catch (error) {
      const whole = (error as { whole?: number }).whole;
      if (whole) this.lastN += whole;
      throw error;
    }
    this.lastN += evs.length;
    return this.lastN;
  }

  /** Records that events up to local `n` are stored, the service answering `seq`. */
  ack(n: number, seq: number): void {
    if (n < this.ackedN) return;
    try {
      this.write({ t: 'ack', n, seq });
    } catch {
      // An ack is a shortcut, not the truth: the run's seq is (recover and resume read it). A full
      // disk must not stop the delivery of what the journal already holds.
    }
    this.ackedN = n;
    this.ackedSeq = seq;
  }

  markClosing(stopReason: StopReason, status: CloseStatus): void {
    this.write({ t: 'close', stopReason, status });
    this.closing = { stopReason, status };
    this.sync();
  }

  markClosed(stopReason: string | null, status: string | null): void {
    this.write({ t: 'closed', stopReason, status });
    this.closed = true;
    this.sync();
  }

  /**
   * Records an agent's process group as it starts. Not forced to disk: the line outlives a kill -9
   * of svc in the page cache, which is when the agent may outlive svc; a crash of the machine that
   * could lose the line ends the agent with it. (An fsync here cost a few ms on every card.)
   */
  agentStarted(key: string, pgid: number, start: string | null): void {
    this.write({ t: 'agent', key, pgid, start });
    this.agents.set(pgid, { key, pgid, start });
  }

  agentEnded(pgid: number): void {
    this.write({ t: 'agent-end', pgid });
    this.agents.delete(pgid);
  }

  /** Forces the journal to disk at the moments a crash would hurt most (close intent, closed). */
  sync(): void {
    try {
      fsyncSync(this.fd);
    } catch {
      // fsync is best effort (some filesystems refuse it); the data is already written.
    }
  }

  /** A forward reader of the events numbered above `afterN`. */
  reader(afterN: number): JournalReader {
    return new JournalReader(this.fd, afterN, this.tornEnds);
  }

  close(): void {
    try {
      closeSync(this.fd);
    } catch {
      // Already closed.
    }
  }
}
