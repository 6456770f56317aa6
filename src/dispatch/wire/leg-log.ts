// A leg's log, the one sink for everything of the leg (docs/dispatch.md "The pipe"): the agent's
// output, the workflow's steps, svc's own lines about the leg and the fence's refusals go, redacted,
// to the leg's local log file and, with --send-logs, to `body` events of at most 16 KiB. One object
// per leg; each program of the leg writes through a pipe of its own (`pipe`: a redactor per stream,
// so interleaved output never cuts a token in two). `flush` hands the gathered body text to the
// event stream (at the stream's own tick: no timer here), `close` ends it all.
import { isUtf8 } from 'node:buffer';
import { closeSync, openSync, writeSync, writevSync } from 'node:fs';
import type { EventStream } from './event-stream.js';
import { createRedactor, createStreamRedactor, type StreamRedactor } from '../redact.js';

/** Where body events go: the run's event stream, each event of the leg's card (absent: of the run). */
export interface BodySink {
  /** Takes the bodies cut from one piece of output in one journal write; `gather` registers the log's flush with the stream's tick. */
  stream: Pick<EventStream, 'pushAll' | 'gather'>;
  workItemKey?: string | undefined;
}

export interface LegLogOptions {
  logFile: string;
  /** The secrets in play now (a pipe's redactors are built from them as it opens). */
  secrets: () => readonly string[];
  /** Secrets can appear while the leg runs (a refreshed git token): each piece is checked again. */
  live: boolean;
  /** With --send-logs: the stream the bodies go to. */
  bodies?: BodySink | undefined;
}

/** One program's output into the leg's log. */
export interface OutputPipe {
  /** A chunk of the program's `from` stream, as its pipe delivered it. */
  write(chunk: Buffer, from?: 'stdout' | 'stderr'): void;
  /** What the redactors held back goes out, then the gathered bodies. Idempotent. */
  end(): void;
}

export interface PipeOptions {
  /** Sees stdout as it came, before redaction (the review's capture, the spend). */
  onStdout?: ((chunk: Buffer) => void) | undefined;
  /** Sees the redacted text as it goes to the log (a failed check's tail). */
  onText?: ((text: string) => void) | undefined;
}

export class LegLog {
  private readonly fd: number;
  private readonly chunker: BodyChunker | null;
  /** Bodies cut since the last hand-over: a piece of output's bodies go to the stream together. */
  private cut: string[] = [];
  private readonly leave: () => void;
  /** The second pass for secrets minted after a pipe's redactors were built; rebuilt when the list grows. */
  private late: { count: number; redact: (text: string) => string } | null = null;
  private readonly open = new Set<OutputPipe>();
  private closed = false;

  constructor(private readonly o: LegLogOptions) {
    this.fd = openSync(o.logFile, 'a', 0o600);
    const bodies = o.bodies;
    this.chunker = bodies ? new BodyChunker((body) => void this.cut.push(body)) : null;
    this.leave = bodies ? bodies.stream.gather(() => this.flush()) : () => undefined;
  }

  /** A line of svc's own about the leg (a step's command, a refusal), redacted like output. */
  note(text: string): void {
    if (this.closed) return;
    this.emit(createRedactor(this.o.secrets())(`[svc] ${text}\n`));
  }

  /** A pipe for one program of the leg (the agent, a workflow step). */
  pipe(options: PipeOptions = {}): OutputPipe {
    const secrets = this.o.secrets();
    const redactors: Record<'stdout' | 'stderr', StreamRedactor> = { stdout: createStreamRedactor(secrets), stderr: createStreamRedactor(secrets) };
    const emit = (piece: string | Buffer[]) => {
      const text = this.emit(piece, Boolean(options.onText));
      if (text) options.onText?.(text);
    };
    let ended = false;
    const pipe: OutputPipe = {
      write: (chunk, from = 'stdout') => {
        if (from === 'stdout') options.onStdout?.(chunk);
        emit(redactors[from].pushBytes(chunk));
      },
      end: () => {
        if (ended) return;
        ended = true;
        this.open.delete(pipe);
        emit(redactors.stdout.flush());
        emit(redactors.stderr.flush());
        this.flush();
      },
    };
    this.open.add(pipe);
    return pipe;
  }

  /** Body text gathered so far goes to the stream as events (a part-filled chunk too). */
  flush(): void {
    this.chunker?.flush();
    this.handOver();
  }

  private handOver(): void {
    if (this.cut.length === 0) return;
    const bodies = this.cut;
    this.cut = [];
    const key = this.o.bodies!.workItemKey;
    this.o.bodies!.stream.pushAll(bodies.map((body) => (key ? { workItemKey: key, body } : { body })));
  }

  /** Every pipe still open is ended, the last body goes, then the log is closed. Idempotent. */
  close(): void {
    if (this.closed) return;
    try {
      for (const pipe of [...this.open]) pipe.end();
      this.flush();
    } finally {
      this.closed = true;
      this.leave();
      closeSync(this.fd);
    }
  }

  /**
   * Redacted output to the log and the chunker; the text when asked for (else only when decoded
   * anyway). Output that needed no redaction arrives as the program's own bytes (redact.ts
   * pushBytes, in pieces) and stays bytes: written as it is in one system call, decoded once per body.
   */
  private emit(piece: string | Buffer[], wantText = false): string | null {
    if (this.closed) return null;
    if (typeof piece === 'string' || this.o.live) {
      const text = this.lateRedact(typeof piece === 'string' ? piece : Buffer.concat(piece).toString('utf8'));
      if (text.length === 0) return null;
      writeSync(this.fd, text);
      this.chunker?.write(text);
      this.handOver();
      return text;
    }
    if (piece.length === 0) return null;
    writevSync(this.fd, piece);
    for (const part of piece) this.chunker?.write(part);
    this.handOver();
    return wantText ? Buffer.concat(piece).toString('utf8') : null;
  }

  private lateRedact(text: string): string {
    if (!this.o.live || text.length === 0) return text;
    const now = this.o.secrets();
    if (!this.late || this.late.count !== now.length) this.late = { count: now.length, redact: createRedactor(now) };
    return this.late.redact(text);
  }
}

// Agent output as `body` events of at most 16 KiB of UTF-8 (docs/agents.md, docs/dispatch.md#the-wire):
// output is gathered as bytes and cut on character boundaries, never through a character or a
// surrogate pair. Here, beside its one user: the log hands each redacted piece to it and the cut
// bodies on to the stream, one step for the output where two modules passed it along.

/** Largest prefix of `buf` (≤ max bytes) that ends on a UTF-8 character boundary. */
export function utf8Cut(buf: Buffer, max: number): number {
  if (buf.length <= max) return buf.length;
  let cut = max;
  // Step back over continuation bytes (10xxxxxx) so a multi-byte character is never split.
  while (cut > 0 && (buf[cut]! & 0xc0) === 0x80) cut--;
  return cut === 0 ? max : cut;
}

/**
 * Turns an agent's output into `body` events of at most `maxBytes` UTF-8 bytes: output is gathered
 * and emitted when a chunk is full or on `flush()` (at the stream's tick and at the end of a leg).
 * It takes the redacted output as it comes: the agent's own bytes when nothing needed redacting
 * (decoded once, a body at a time), text when something did.
 */
export class BodyChunker {
  private parts: Buffer[] = [];
  private bytes = 0;
  /** A text's last unit when it is the first half of a surrogate pair: it waits for its pair. */
  private highSurrogate = '';

  constructor(
    private readonly emit: (body: string) => void,
    private readonly maxBytes = 16_384,
  ) {}

  write(output: string | Buffer): void {
    const bytes = typeof output === 'string' ? this.encode(output) : output;
    if (bytes.length === 0) return;
    this.parts.push(bytes);
    this.bytes += bytes.length;
    if (this.bytes >= this.maxBytes) this.drain(false);
  }

  flush(): void {
    // A lone high surrogate at a flush stays lone: encoded as U+FFFD, as the encoder does.
    if (this.highSurrogate) this.write(this.encode(''));
    this.drain(true);
  }

  private encode(text: string): Buffer {
    let whole = this.highSurrogate + text;
    this.highSurrogate = '';
    const last = whole.charCodeAt(whole.length - 1);
    if (text.length > 0 && last >= 0xd800 && last <= 0xdbff) {
      this.highSurrogate = whole.slice(-1);
      whole = whole.slice(0, -1);
    }
    return Buffer.from(whole, 'utf8');
  }

  private drain(all: boolean): void {
    if (this.bytes === 0) return;
    let buf = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts, this.bytes);
    this.parts = [];
    // Bytes that are not UTF-8 become U+FFFD, three bytes each, in the body: cut what it will be.
    if (!isUtf8(buf)) buf = Buffer.from(buf.toString('utf8'), 'utf8');
    while (buf.length >= this.maxBytes || (all && buf.length > 0)) {
      const cut = utf8Cut(buf, this.maxBytes);
      this.emit(buf.toString('utf8', 0, cut));
      buf = buf.subarray(cut);
    }
    this.bytes = buf.length;
    if (buf.length > 0) this.parts.push(buf);
  }
}
