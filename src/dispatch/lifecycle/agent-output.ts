// The agent's output pipe (DISPATCH.md §5): every byte the agent prints goes, redacted, to the leg's
// local log and, with --send-logs, to `body` events of at most 16 KiB. One object per agent run:
// `write` takes each chunk as the agent's pipes deliver it, `flush` hands the gathered body text to
// the event stream (called at the stream's own tick: no timer here), `close` ends it all.
import { closeSync, openSync, writeSync, writevSync } from 'node:fs';
import { BodyChunker } from '../wire/body-chunker.js';
import { createRedactor, createStreamRedactor, type StreamRedactor } from '../redact.js';

/** Where body events go: the run's event stream. */
export interface BodySink {
  /** The bodies cut from one piece of output, in order: journalled in one write. */
  push(bodies: string[]): void;
  /** Registers `flush` with the stream's tick; returns the way to leave. */
  gather(flush: () => void): () => void;
}

export interface AgentOutputOptions {
  logFile: string;
  /** The secrets in play now (the redactors are built from them as the pipe opens). */
  secrets: () => readonly string[];
  /** Secrets can appear while the agent runs (a refreshed git token): each piece is checked again. */
  live: boolean;
  /** With --send-logs: the stream the bodies go to. */
  bodies?: BodySink | undefined;
  /** Sees the agent's stdout as it came, before redaction (the review's capture, the spend). */
  onStdout?: ((chunk: Buffer) => void) | undefined;
}

export class AgentOutput {
  private readonly log: number;
  /** One redactor per stream: interleaved stdout and stderr must not cut a token in either. */
  private readonly redactors: Record<'stdout' | 'stderr', StreamRedactor>;
  private readonly chunker: BodyChunker | null;
  /** Bodies cut since the last hand-over: a piece of output's bodies go to the stream together. */
  private cut: string[] = [];
  private readonly leave: () => void;
  /** The second pass for secrets minted after the redactors were built; rebuilt when the list grows. */
  private late: { count: number; redact: (text: string) => string } | null = null;
  private closed = false;

  constructor(private readonly o: AgentOutputOptions) {
    const secrets = o.secrets();
    this.redactors = { stdout: createStreamRedactor(secrets), stderr: createStreamRedactor(secrets) };
    this.log = openSync(o.logFile, 'a', 0o600);
    const bodies = o.bodies;
    this.chunker = bodies ? new BodyChunker((body) => void this.cut.push(body)) : null;
    this.leave = bodies ? bodies.gather(() => this.flush()) : () => undefined;
  }

  /** A chunk of the agent's `from` stream. */
  write(chunk: Buffer, from: 'stdout' | 'stderr'): void {
    if (from === 'stdout') this.o.onStdout?.(chunk);
    this.emit(this.redactors[from].pushBytes(chunk));
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

  /** What the redactors held back, the last body, then the log is closed. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.leave();
    try {
      this.emit(this.redactors.stdout.flush());
      this.emit(this.redactors.stderr.flush());
      this.flush();
    } finally {
      closeSync(this.log);
    }
  }

  /**
   * Redacted output to the log and the chunker. Output that needed no redaction arrives as the
   * agent's own bytes (redact.ts pushBytes, in pieces) and stays bytes: written as it is in one
   * system call, decoded once per body.
   */
  private emit(piece: string | Buffer[]): void {
    if (typeof piece === 'string' || this.o.live) {
      const text = this.lateRedact(typeof piece === 'string' ? piece : Buffer.concat(piece).toString('utf8'));
      if (text.length === 0) return;
      writeSync(this.log, text);
      this.chunker?.write(text);
    } else {
      if (piece.length === 0) return;
      writevSync(this.log, piece);
      for (const part of piece) this.chunker?.write(part);
    }
    this.handOver();
  }

  private lateRedact(text: string): string {
    if (!this.o.live || text.length === 0) return text;
    const now = this.o.secrets();
    if (!this.late || this.late.count !== now.length) this.late = { count: now.length, redact: createRedactor(now) };
    return this.late.redact(text);
  }
}
