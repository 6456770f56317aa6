// A review leg's result is the agent's final message. For an agent with a machine-readable stream
// its parser reports it (StreamParser.finalMessage); for a plain command it is the tail of stdout,
// kept here.
import { StringDecoder } from 'node:string_decoder';

/** The most of a review kept (bytes of UTF-8): what fits one event body. */
export const REVIEW_MAX_BYTES = 16_000;

/** The tail of `s` that fits `max` bytes of UTF-8, cut at a character boundary. */
export function tailBytes(s: string, max = REVIEW_MAX_BYTES): string {
  if (Buffer.byteLength(s) <= max) return s;
  const buf = Buffer.from(s);
  let start = buf.length - max;
  // Skip continuation bytes so the tail starts on a whole character.
  while (start < buf.length && (buf[start]! & 0xc0) === 0x80) start++;
  return buf.subarray(start).toString('utf8');
}

/** The tail of a plain command's stdout: its final message when no stream format says more. */
export class StdoutTail {
  private readonly decoder = new StringDecoder('utf8');
  private raw = '';

  push(chunk: Buffer): void {
    this.raw = tailBytes(this.raw + this.decoder.write(chunk), REVIEW_MAX_BYTES * 2);
  }

  result(): string | null {
    const out = (this.raw + this.decoder.end()).trim();
    return out ? tailBytes(out) : null;
  }
}
