// Redaction of every log line a file or the service receives (docs/dispatch.md#the-wire): the tokens in play
// (SVC_TOKEN, SVC_RUN_TOKEN, git tokens from getGitCredential) and well-known token shapes. Agent output
// arrives in arbitrary chunks, so the streaming variant holds back a tail that could still be the
// start of a secret and only emits text no later chunk can turn into one.
import { BEARER_VALUE, TOKEN_PREFIXES, TOKEN_SHAPES, tokenShapePattern } from '../api/token-shapes.js';

export const REDACTED = '[REDACTED]';

/** Well-known token shapes: the table the API client's error scrubbing uses too. */
const SHAPES: RegExp[] = TOKEN_SHAPES.map((shape) => tokenShapePattern(shape));
/** `Authorization: <scheme> <value>` (header, JSON or env style): the whole value goes. */
const AUTHORIZATION = /(\bauthorization["']?\s*[:=]\s*["']?)(?:(?:bearer|basic|token)\s+)?[^\s"',;]+/gi;

/** Secrets shorter than this are ignored: redacting every `a` would destroy the log, not protect it. */
const MIN_SECRET_LENGTH = 4;
/** The streaming redactor waits at most this long for the end of a line before emitting. */
const MAX_HELD_LINE = 4096;
/** Characters a token shape is made of: a cut never falls inside a run of them. */
const TOKEN_CHAR = /[A-Za-z0-9_\-.~+/=]/;
const MAX_TOKEN_RUN = 1024;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

interface Matcher {
  /** False when nothing in `text` can be redacted (a fast pass over it). */
  maybe(text: string): boolean;
  /** The same for UTF-8 bytes read as Latin-1 (one character per byte). */
  maybeInBytes(view: string): boolean;
  /** Redact a complete piece of text. */
  redact(text: string): string;
  /** Spans [start, end) of everything that would be redacted in `text`. */
  spans(text: string): Array<[number, number]>;
  longestSecret: number;
  /** The same in UTF-8 bytes. */
  longestSecretBytes: number;
  /** The longest text `maybeInBytes` looks for: a match across two pieces lies within this of their seam. */
  longestTrigger: number;
  /** Whether a secret spans lines (a PEM key): then line boundaries are no safe cut on their own. */
  multiline: boolean;
}

function buildMatcher(secrets: readonly string[]): Matcher {
  const literals = [...new Set(secrets.filter((s) => typeof s === 'string' && s.length >= MIN_SECRET_LENGTH))]
    // Longest first, so a secret that contains another is replaced whole.
    .sort((a, b) => b.length - a.length);
  const literal = literals.length > 0 ? new RegExp(literals.map(escapeRegExp).join('|'), 'g') : null;
  const all: RegExp[] = [...(literal ? [literal] : []), ...SHAPES, AUTHORIZATION, BEARER_VALUE];
  // Every match of the patterns above contains one of these (case aside): one pass over the text
  // says whether any pattern can match, so the six passes run only on the rare text that might.
  // Agent output is almost all such text; this is most of a log pipeline's redaction cost.
  // Case-insensitive words as explicit classes: V8 scans those several times faster than with /i
  // (without the u flag, /i never maps a non-ASCII character to an ASCII one, so this is exact).
  const anyCase = (word: string) => [...word].map((c) => `[${c.toUpperCase()}${c}]`).join('');
  // Three simple scans beat one alternation of them all (measured ~1.5×: V8 finds no common prefix).
  const words = new RegExp(`${anyCase('authorization')}|${anyCase('bearer')}`);
  // A literal holding a token prefix or one of the words (svc's own tokens, GitHub's) is found by
  // those scans already: text holding it holds them.
  const unshaped = literals.filter((l) => !TOKEN_PREFIXES.test(l) && !words.test(l));
  const maybe = (text: string) => TOKEN_PREFIXES.test(text) || words.test(text) || unshaped.some((l) => text.includes(l));
  // The patterns are ASCII, and in UTF-8 an ASCII byte is always that character (every byte of a
  // longer character is 0x80 or above, a non-word character like any non-ASCII one): they match
  // the bytes read as Latin-1 exactly where they match the text. A literal is looked for as its
  // own bytes read so.
  const unshapedBytes = unshaped.map((l) => Buffer.from(l).toString('latin1'));
  return {
    maybe,
    maybeInBytes: (view) => TOKEN_PREFIXES.test(view) || words.test(view) || unshapedBytes.some((l) => view.includes(l)),
    longestSecret: literals[0]?.length ?? 0,
    longestSecretBytes: Math.max(0, ...literals.map((l) => Buffer.byteLength(l))),
    longestTrigger: Math.max('authorization'.length, ...TOKEN_SHAPES.flatMap((s) => s.prefixes.map((p) => p.length)), ...unshapedBytes.map((l) => l.length)),
    multiline: literals.some((s) => s.includes('\n')),
    redact(text) {
      if (!maybe(text)) return text;
      let out = text;
      if (literal) out = out.replace(literal, REDACTED);
      for (const shape of SHAPES) out = out.replace(shape, REDACTED);
      out = out.replace(AUTHORIZATION, `$1${REDACTED}`);
      out = out.replace(BEARER_VALUE, `$1${REDACTED}`);
      return out;
    },
    spans(text) {
      const found: Array<[number, number]> = [];
      if (!maybe(text)) return found;
      for (const re of all) {
        re.lastIndex = 0;
        for (const m of text.matchAll(re)) found.push([m.index, m.index + m[0].length]);
      }
      return found;
    },
  };
}

/** A redactor for complete texts: replaces the given secrets and the well-known token shapes. */
export function createRedactor(secrets: readonly string[]): (text: string) => string {
  const matcher = buildMatcher(secrets);
  return (text) => matcher.redact(text);
}

/** A redactor for a stream of chunks: `push` returns what is safe to emit now, `flush` the rest. */
export interface StreamRedactor {
  push(chunk: string | Buffer): string;
  /**
   * `push` for bytes, without decoding what needs no redaction: when nothing in the bytes safe to
   * emit can be a secret, they come back as they are (views of them: what was held back from the
   * last chunk, then this one's part, never copied together), else as redacted text.
   */
  pushBytes(chunk: Buffer): Buffer[] | string;
  flush(): string;
}

const NO_BYTES = Buffer.alloc(0);
const isContinuation = (byte: number) => (byte & 0xc0) === 0x80;

/** Where the last complete UTF-8 character of `buf` ends: before the first bytes of an unfinished one. */
function completeEnd(buf: Buffer): number {
  let lead = buf.length - 1;
  while (lead > buf.length - 4 && lead >= 0 && isContinuation(buf[lead]!)) lead--;
  if (lead < 0) return buf.length;
  const b = buf[lead]!;
  const size = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
  return lead + size > buf.length ? lead : buf.length;
}

/** `cut`, moved back to a character boundary of `buf`. */
function characterCut(buf: Buffer, cut: number): number {
  if (cut >= buf.length) return completeEnd(buf);
  for (let back = 0; back < 3 && cut > 0 && isContinuation(buf[cut]!); back++) cut--;
  return cut;
}

/**
 * Redact a stream whose chunks may split a secret. Held back: the incomplete last line (up to
 * 4 KiB, so `Authorization:` values and token shapes are judged on whole lines); for a longer
 * line, or when a secret spans lines, the last `longest secret - 1` characters (bytes, for text
 * with nothing to redact). A cut never falls inside a match, a run of token characters or a
 * UTF-8 character.
 */
export function createStreamRedactor(secrets: readonly string[]): StreamRedactor {
  const matcher = buildMatcher(secrets);
  /** What was received and not emitted yet, as bytes (a string chunk is encoded). */
  let held: Buffer = NO_BYTES;
  /** A string chunk's last unit when it is the first half of a surrogate pair. */
  let highSurrogate = '';

  /**
   * `clean`: nothing in `text` can match, so only the held line and token runs decide the cut.
   * `text` is the decoded text, or (clean) the bytes read as Latin-1: `longest` is in its units.
   */
  function safeCut(text: string, clean: boolean, longest: number): number {
    const lineStart = text.lastIndexOf('\n') + 1;
    const tailHold = Math.max(0, text.length - Math.max(0, longest - 1));
    // A one-line secret cannot cross a newline, so holding the unfinished line already covers it;
    // past 4 KiB (or with a multi-line secret) the last `longest secret - 1` characters are held.
    let cut = text.length - lineStart <= MAX_HELD_LINE ? lineStart : tailHold;
    if (matcher.multiline) cut = Math.min(cut, tailHold);
    // Never cut inside a run of token characters: it may be the front half of a token shape.
    let back = 0;
    // At the very end the next character is unknown yet, so a trailing run counts as unfinished.
    while (cut > 0 && back < MAX_TOKEN_RUN && TOKEN_CHAR.test(text[cut - 1]!) && (cut === text.length || TOKEN_CHAR.test(text[cut]!))) {
      cut--;
      back++;
    }
    // Never cut through a complete match: move the cut to its start (repeat: matches can overlap).
    for (let moved = !clean; moved; ) {
      moved = false;
      for (const [start, end] of matcher.spans(text)) {
        if (start < cut && cut < end) {
          cut = start;
          moved = true;
        }
      }
    }
    return cut;
  }

  function pushBytes(chunk: Buffer): Buffer[] | string {
    return pushLines(chunk) ?? pushJoined(chunk);
  }

  /**
   * The common case without copying the held bytes and the chunk together (a copy of every byte,
   * and garbage, at 64 KiB a read): the chunk ends its last line within 4 KiB and nothing in it,
   * in what was held or across their seam can be a secret. Then the cut is after that newline, as
   * `pushJoined` would cut; otherwise null, and it decides.
   */
  function pushLines(chunk: Buffer): Buffer[] | null {
    if (matcher.multiline) return null;
    const view = chunk.toString('latin1');
    const end = view.lastIndexOf('\n') + 1;
    if (end === 0 || view.length - end > MAX_HELD_LINE || (end < chunk.length && isContinuation(chunk[end]!))) return null;
    if (matcher.maybeInBytes(view)) return null;
    if (held.length > 0 && matcher.maybeInBytes(held.toString('latin1') + view.slice(0, matcher.longestTrigger))) return null;
    const out = held.length > 0 ? [held, chunk.subarray(0, end)] : [chunk.subarray(0, end)];
    held = end < chunk.length ? Buffer.from(chunk.subarray(end)) : NO_BYTES;
    return out;
  }

  function pushJoined(chunk: Buffer): Buffer[] | string {
    const data = held.length > 0 ? Buffer.concat([held, chunk]) : chunk;
    // Most output holds nothing to redact: it is judged and cut as bytes, never decoded here.
    const view = data.toString('latin1');
    if (!matcher.maybeInBytes(view)) {
      const cut = characterCut(data, safeCut(view, true, matcher.longestSecretBytes));
      held = cut < data.length ? Buffer.from(data.subarray(cut)) : NO_BYTES;
      return [data.subarray(0, cut)];
    }
    const end = completeEnd(data);
    const text = data.toString('utf8', 0, end);
    const cut = safeCut(text, false, matcher.longestSecret);
    held = Buffer.concat([Buffer.from(text.slice(cut)), data.subarray(end)]);
    return cut > 0 ? matcher.redact(text.slice(0, cut)) : '';
  }

  return {
    pushBytes,
    push(chunk) {
      let bytes = chunk;
      if (typeof chunk === 'string') {
        let text = highSurrogate + chunk;
        highSurrogate = '';
        const last = text.charCodeAt(text.length - 1);
        if (last >= 0xd800 && last <= 0xdbff) {
          highSurrogate = text.slice(-1);
          text = text.slice(0, -1);
        }
        bytes = Buffer.from(text);
      }
      const out = pushBytes(bytes as Buffer);
      // Joined before decoding: the held bytes may end inside a character the chunk finishes.
      return typeof out === 'string' ? out : Buffer.concat(out).toString('utf8');
    },
    flush() {
      const rest = held.toString('utf8') + highSurrogate;
      held = NO_BYTES;
      highSurrogate = '';
      return rest ? matcher.redact(rest) : '';
    },
  };
}
