// A review leg's result is the agent's final message. For an agent with a machine-readable stream
// it is the final text the stream carries (Claude Code's `result`, Codex's last `agent_message`,
// Gemini's last run of assistant messages, opencode's last `text` part); for a plain command, the
// tail of its stdout. Collected from the same stdout bytes the stream parser reads.
import { StringDecoder } from 'node:string_decoder';
import type { StreamFormat } from '../agent/types.js';

/** The most of a review kept (bytes of UTF-8): what fits one event body. */
export const REVIEW_MAX_BYTES = 16_000;

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const text = (v: unknown): string | null => (typeof v === 'string' && v.trim() ? v : null);

/** The tail of `s` that fits `max` bytes of UTF-8, cut at a character boundary. */
export function tailBytes(s: string, max = REVIEW_MAX_BYTES): string {
  if (Buffer.byteLength(s) <= max) return s;
  const buf = Buffer.from(s);
  let start = buf.length - max;
  // Skip continuation bytes so the tail starts on a whole character.
  while (start < buf.length && (buf[start]! & 0xc0) === 0x80) start++;
  return buf.subarray(start).toString('utf8');
}

export class ReviewText {
  private readonly decoder = new StringDecoder('utf8');
  private partial = '';
  private last: string | null = null;
  /** Gemini streams its answer as delta messages: consecutive ones are one message. */
  private gemini = '';
  private raw = '';

  constructor(private readonly format: StreamFormat | null) {}

  push(chunk: Buffer): void {
    const s = this.decoder.write(chunk);
    if (!this.format) {
      this.raw = tailBytes(this.raw + s, REVIEW_MAX_BYTES * 2);
      return;
    }
    const lines = (this.partial + s).split('\n');
    this.partial = lines.pop() ?? '';
    // A line longer than any event an agent sends is dropped rather than held.
    if (this.partial.length > 8 << 20) this.partial = '';
    for (const line of lines) this.line(line);
  }

  /** The review, or null when the agent said nothing usable. */
  result(): string | null {
    const rest = this.partial + this.decoder.end();
    this.partial = '';
    if (!this.format) {
      const out = (this.raw + rest).trim();
      return out ? tailBytes(out) : null;
    }
    if (rest) this.line(rest);
    const out = (this.last ?? this.gemini).trim();
    return out ? tailBytes(out) : null;
  }

  private line(raw: string): void {
    const t = raw.trim();
    if (!t.startsWith('{')) return;
    let ev: unknown;
    try {
      ev = JSON.parse(t);
    } catch {
      return;
    }
    if (!isObj(ev)) return;
    switch (this.format) {
      case 'claude-stream-json':
        if (ev.type === 'result') this.last = text(ev.result) ?? this.last;
        break;
      case 'codex-json':
        if (ev.type === 'item.completed' && isObj(ev.item) && ev.item.type === 'agent_message') this.last = text(ev.item.text) ?? this.last;
        break;
      case 'gemini-stream-json':
        if (ev.type === 'message' && ev.role === 'assistant' && typeof ev.content === 'string') this.gemini += ev.content;
        else if (ev.type === 'tool_use' || ev.type === 'tool_result') this.gemini = '';
        break;
      case 'opencode-json':
        if (ev.type === 'text' && isObj(ev.part)) this.last = text(ev.part.text) ?? this.last;
        break;
      default:
        break;
    }
  }
}
