// Agent output as `body` events of at most 16 KiB of UTF-8 (DISPATCH.md §3, §5): text is gathered
// and cut on character boundaries, never through a character or a surrogate pair.

/** Largest prefix of `buf` (≤ max bytes) that ends on a UTF-8 character boundary. */
export function utf8Cut(buf: Buffer, max: number): number {
  if (buf.length <= max) return buf.length;
  let cut = max;
  // Step back over continuation bytes (10xxxxxx) so a multi-byte character is never split.
  while (cut > 0 && (buf[cut]! & 0xc0) === 0x80) cut--;
  return cut === 0 ? max : cut;
}

/**
 * Turns an agent's output into `body` events of at most `maxBytes` UTF-8 bytes: text is gathered
 * and emitted when a chunk is full or on `flush()` (the caller flushes on an interval and at the
 * end of a leg). The text it receives is already redacted.
 */
export class BodyChunker {
  private parts: string[] = [];
  private bytes = 0;

  constructor(private readonly emit: (body: string) => void, private readonly maxBytes = 16_384) {}

  write(text: string): void {
    if (text.length === 0) return;
    this.parts.push(text);
    this.bytes += Buffer.byteLength(text);
    if (this.bytes >= this.maxBytes) this.drain(false);
  }

  flush(): void {
    this.drain(true);
  }

  private drain(all: boolean): void {
    if (this.bytes === 0) return;
    let text = this.parts.join('');
    this.parts = [];
    // As many bytes as characters: ASCII only, so the cuts fall by index, with no trip through a
    // Buffer and back (two passes over every byte of a chatty agent's output).
    if (this.bytes === text.length) return this.drainAscii(text, all);
    // A high surrogate at the end waits for its pair, or the encoder would turn it into U+FFFD.
    let held = '';
    const last = text.charCodeAt(text.length - 1);
    if (!all && last >= 0xd800 && last <= 0xdbff) {
      held = text.slice(-1);
      text = text.slice(0, -1);
    }
    let buf = Buffer.from(text, 'utf8');
    while (buf.length >= this.maxBytes || (all && buf.length > 0)) {
      const cut = utf8Cut(buf, this.maxBytes);
      this.emit(buf.toString('utf8', 0, cut));
      buf = buf.subarray(cut);
    }
    const rest = buf.toString('utf8') + held;
    this.bytes = Buffer.byteLength(rest);
    if (rest.length > 0) this.parts.push(rest);
  }

  private drainAscii(text: string, all: boolean): void {
    let at = 0;
    while (text.length - at >= this.maxBytes || (all && at < text.length)) {
      const end = Math.min(at + this.maxBytes, text.length);
      this.emit(text.slice(at, end));
      at = end;
    }
    const rest = text.slice(at);
    this.bytes = rest.length;
    if (rest.length > 0) this.parts.push(rest);
  }
}
