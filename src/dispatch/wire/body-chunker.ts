// Agent output as `body` events of at most 16 KiB of UTF-8 (docs/agents.md, docs/dispatch.md#the-wire): output is gathered
// as bytes and cut on character boundaries, never through a character or a surrogate pair.
import { isUtf8 } from 'node:buffer';

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
