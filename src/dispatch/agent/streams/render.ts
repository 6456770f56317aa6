// An agent's recorded stream as readable lines (`svc logs`): each JSON event its format knows
// becomes what it says (a shell command as `$ …`, its output indented, the agent's words as they
// are, a closing `done:`/`failed:` line with the spend), and every other line (a warning, a crash
// trace, svc's own `[svc]` lines, an event this version does not know) comes as it was recorded.
// Each format's half is beside its parser (claude.ts, codex.ts, …): the format is known in one place.
import { StringDecoder } from 'node:string_decoder';
import { type JsonObject, parseEvent } from './json-lines.js';

/** What one format makes of its events. */
export interface EventLines {
  /** The readable lines of one event; null for an event this format does not know (shown as recorded). */
  lines(event: JsonObject): string[] | null;
  /** Lines held back across events (Gemini streams a message in pieces), shown before anything else. */
  held?(): string[];
}

/** A line longer than this is no event (a runaway dump): it is shown as it came, unparsed. */
const MAX_LINE_CHARS = 8 * 1024 * 1024;
/** A tool's output is shown up to this many lines; `svc logs --raw` has all of it. */
const OUTPUT_LINES = 10;

export class StreamRenderer {
  private readonly decoder = new StringDecoder('utf8');
  private partial = '';
  /** Inside an over-long line: it passes through up to its end. */
  private passing = false;

  /** `events` null: a stream svc knows no format of; every line comes as recorded. */
  constructor(private readonly events: EventLines | null) {}

  /** The readable text of `chunk`; a line still without its newline is held back for the next. */
  push(chunk: Buffer | string): string {
    const text = typeof chunk === 'string' ? chunk : this.decoder.write(chunk);
    let out = '';
    let start = 0;
    for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', start)) {
      const piece = text.slice(start, nl);
      start = nl + 1;
      if (this.passing) {
        this.passing = false;
        out += `${piece}\n`;
        continue;
      }
      out += this.line(this.partial + piece, '\n');
      this.partial = '';
    }
    const rest = text.slice(start);
    if (this.passing) return out + rest;
    this.partial += rest;
    if (this.partial.length > MAX_LINE_CHARS) {
      out += this.held() + this.partial;
      this.partial = '';
      this.passing = true;
    }
    return out;
  }

  /**
   * The end of what there is to read. A last line without its newline (a live run's agent cut
   * mid-write) is shown as it is when it does not parse: a truncated event is no error.
   */
  end(): string {
    const rest = this.partial + this.decoder.end();
    this.partial = '';
    const out = this.passing ? rest : rest ? this.line(rest, '') : '';
    this.passing = false;
    return out + this.held();
  }

  private line(raw: string, eol: string): string {
    const event = this.events ? parseEvent(raw) : null;
    let lines: string[] | null = null;
    try {
      lines = event ? this.events!.lines(event) : null;
    } catch {
      // A shape the format did not expect is shown as recorded, like a line that is not JSON.
      lines = null;
    }
    if (lines === null) return this.held() + raw + eol;
    return lines.map((l) => `${l}\n`).join('');
  }

  private held(): string {
    return (this.events?.held?.() ?? []).map((l) => `${l}\n`).join('');
  }
}

// The words every format's lines share.

/** A shell command the agent ran: `$ CMD`, its further lines indented. */
export function shellLine(command: string): string[] {
  const [first = '', ...more] = command.split('\n');
  return [`$ ${first}`, ...more.map((l) => `  ${l}`)];
}

/** Another tool call: `→ NAME what` (a path, a pattern, a URL, else its input in short). */
export function toolLine(name: string, input: unknown): string {
  return `→ ${name}${detailOf(input) ? ` ${detailOf(input)}` : ''}`;
}

const DETAIL_KEYS = ['file_path', 'filePath', 'path', 'notebook_path', 'pattern', 'url', 'query', 'description', 'prompt'];
const SHORT = 100;

function detailOf(input: unknown): string {
  if (typeof input !== 'object' || input === null) return typeof input === 'string' ? oneLine(input) : '';
  const fields = input as Record<string, unknown>;
  for (const k of DETAIL_KEYS) if (typeof fields[k] === 'string' && fields[k]) return oneLine(fields[k] as string);
  const json = JSON.stringify(input);
  return json === '{}' ? '' : oneLine(json);
}

function oneLine(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > SHORT ? `${line.slice(0, SHORT - 1)}…` : line;
}

/** A tool's output, indented under its call, cut after a few lines. */
export function outputLines(text: string, prefix = ''): string[] {
  const lines = text.replace(/\n+$/, '').split('\n');
  if (lines.length === 1 && !lines[0]) return [];
  const shown = lines.slice(0, OUTPUT_LINES).map((l, i) => `  ${i === 0 ? prefix : ''}${l}`);
  return lines.length > OUTPUT_LINES ? [...shown, `  … ${lines.length - OUTPUT_LINES} more lines (svc logs --raw)`] : shown;
}

/** What the agent said, as it said it. */
export function textLines(text: string): string[] {
  const trimmed = text.replace(/\n+$/, '');
  return trimmed.trim() ? trimmed.split('\n') : [];
}

/** The model's reasoning, marked as such. */
export function thinkingLines(text: string): string[] {
  return textLines(text).map((l, i) => (i === 0 ? `(thinking) ${l}` : `  ${l}`));
}

export interface EndFacts {
  turns?: number | undefined;
  durationMs?: number | undefined;
  costUsd?: number | undefined;
  tokensIn?: number | undefined;
  tokensOut?: number | undefined;
}

/** The closing line: `done: 2 turns, 0.8 s, $0.0022, 240 tokens in, 60 out`, or `failed: why`. */
export function endLine(failure: string | null, facts: EndFacts): string {
  const said = [
    ...(facts.turns !== undefined ? [`${facts.turns} turn${facts.turns === 1 ? '' : 's'}`] : []),
    ...(facts.durationMs !== undefined ? [`${(facts.durationMs / 1000).toFixed(1)} s`] : []),
    ...(facts.costUsd !== undefined ? [`$${Number(facts.costUsd.toFixed(4))}`] : []),
    ...(facts.tokensIn !== undefined ? [`${facts.tokensIn} tokens in`] : []),
    ...(facts.tokensOut !== undefined ? [`${facts.tokensOut} out`] : []),
  ].join(', ');
  if (failure !== null) return `failed: ${oneLineAll(failure)}${said ? ` (${said})` : ''}`;
  return `done${said ? `: ${said}` : ''}`;
}

/** An error's text on one line, however long: it is the reason a reader looks for. */
function oneLineAll(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
