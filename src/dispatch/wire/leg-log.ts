// A leg's log, the one sink for everything of the leg (docs/dispatch.md "The pipe"): the agent's
// output, the workflow's steps, svc's own lines about the leg and the fence's refusals go, redacted,
// to the leg's local log file and, with --send-logs, to `body` events of at most 16 KiB. One object
// per leg; each program of the leg writes through a pipe of its own (`pipe`: a redactor per stream,
// so interleaved output never cuts a token in two). `flush` hands the gathered body text to the
// event stream (at the stream's own tick: no timer here), `close` ends it all.
import { closeSync, openSync, writeSync, writevSync } from 'node:fs';
import { BodyChunker } from './body-chunker.js';
import { createRedactor, createStreamRedactor, type StreamRedactor } from '../redact.js';

/** Where body events go: the run's event stream. */
export interface BodySink {
  /** The bodies cut from one piece of output, in order: journalled in one write. */
  push(bodies: string[]): void;
  /** Registers `flush` with the stream's tick; returns the way to leave. */
  gather(flush: () => void): () => void;
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
    this.leave = bodies ? bodies.gather(() => this.flush()) : () => undefined;
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
    this.o.bodies!.push(bodies);
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
