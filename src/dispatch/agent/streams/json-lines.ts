// The shared half of every stream parser: split stdout into lines as bytes arrive, parse each line
// as JSON, hand objects to the format's handler. Agents interleave non-JSON noise (warnings, a
// banner, a crash trace) with their events, so anything that does not parse as an object is
// skipped, and a handler that trips over an unexpected shape is contained too.
import { StringDecoder } from 'node:string_decoder';
import type { StreamFormat, StreamParser, StreamUsage, StreamVerdict } from '../types.js';

/** A line longer than this is no event any agent sends (a runaway dump): it is dropped. */
const MAX_LINE_CHARS = 8 * 1024 * 1024;
const MAX_REASON_CHARS = 300;

export type JsonObject = Record<string, unknown>;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A finite non-negative number, else undefined: usage fields are read defensively. */
export function num(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}

export function str(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

/** `agent reported error: <detail>` on one line, bounded, for the leg's reason. */
export function agentError(detail: string | undefined): string {
  const line = (detail ?? 'unknown error').replace(/\s+/g, ' ').trim();
  const short = line.length > MAX_REASON_CHARS ? `${line.slice(0, MAX_REASON_CHARS - 1)}…` : line;
  return `agent reported error: ${short}`;
}

/**
 * An agent's error text with a provider's JSON error body inside it (`{"error":{"message":…}}`,
 * as Codex and opencode pass it on, or Gemini's `[API Error: {…}]`) reads as the inner message.
 */
export function readableMessage(text: string): string {
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start < 0 || end <= start) return text;
  try {
    const body: unknown = JSON.parse(text.slice(start, end + 1));
    const error = isObject(body) && isObject(body.error) ? body.error : body;
    const inner = isObject(error) ? str(error.message) : undefined;
    return inner ? `${text.slice(0, start)}${inner}${text.slice(end + 1)}`.trim() : text;
  } catch {
    return text;
  }
}

/** One line of a stream as its event, or null when it is no JSON object (noise, a trace, a cut line). */
export function parseEvent(raw: string): JsonObject | null {
  const line = raw.trim();
  if (!line.startsWith('{')) return null;
  try {
    const event: unknown = JSON.parse(line);
    return isObject(event) ? event : null;
  } catch {
    return null;
  }
}

/** A string with more than whitespace in it, else undefined: what an agent said. */
export function words(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() ? value : undefined;
}

/** Adds a possibly missing count to a possibly missing total. */
export function add(total: number | undefined, value: number | undefined): number | undefined {
  if (value === undefined) return total;
  return (total ?? 0) + value;
}

export abstract class JsonLinesParser implements StreamParser {
  abstract readonly format: StreamFormat;
  protected result: StreamVerdict | null = null;
  protected spend: StreamUsage = {};
  /** The latest final text the format's events carried. */
  protected message: string | null = null;
  private readonly decoder = new StringDecoder('utf8');
  private partial = '';
  private skipping = false;

  /** Handle one parsed event. */
  protected abstract onEvent(event: JsonObject): void;

  push(chunk: Buffer | string): void {
    const text = typeof chunk === 'string' ? chunk : this.decoder.write(chunk);
    let start = 0;
    for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', start)) {
      const piece = text.slice(start, nl);
      start = nl + 1;
      if (this.skipping) {
        // The rest of an over-long line: dropped up to its end.
        this.skipping = false;
        this.partial = '';
        continue;
      }
      const line = this.partial + piece;
      this.partial = '';
      this.line(line);
    }
    if (!this.skipping) {
      this.partial += text.slice(start);
      if (this.partial.length > MAX_LINE_CHARS) {
        this.partial = '';
        this.skipping = true;
      }
    }
  }

  end(): void {
    const rest = this.partial + this.decoder.end();
    this.partial = '';
    if (!this.skipping) this.line(rest);
    this.skipping = false;
  }

  verdict(): StreamVerdict | null {
    return this.result;
  }

  usage(): StreamUsage {
    return { ...this.spend };
  }

  finalMessage(): string | null {
    return this.message?.trim() || null;
  }

  private line(raw: string): void {
    const event = parseEvent(raw);
    if (!event) return;
    try {
      this.onEvent(event);
    } catch {
      // A shape the handler did not expect is ignored like a garbled line: never crash the leg.
    }
  }
}
