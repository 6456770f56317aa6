// The one object through which commands talk to the terminal. Data goes to stdout, everything
// else (progress, hints, errors) to stderr. Spinners and colour appear only where a person is
// watching: stderr is a TTY, not CI, not --json, and NO_COLOR/--no-color are not set. chalk ignores
// NO_COLOR by itself, so the level is decided here once; chalk itself comes with it (./style.ts).
import type { Writable } from 'node:stream';
import { PLAIN, type Style } from './style.js';
import { visible, visibleKeepingStyle } from './visible.js';

/** A writable stream with the TTY facts the output needs (process streams and test doubles alike). */
export interface OutStream extends Writable {
  isTTY?: boolean;
  columns?: number;
}

export interface OutputOptions {
  stdout: OutStream;
  stderr: OutStream;
  env: Record<string, string | undefined>;
  json?: boolean;
  /** `--jq EXPR`: the JSON document is filtered through it (implies `json`). */
  jq?: string;
  /** commander's `--no-color` sets `color: false`. */
  color?: boolean;
  verbose?: boolean;
  /** The styles for colorLevel(this, stderr): loadStyle's. Needed only when that level is above 0. */
  style?: Style;
}

export interface Spinner {
  text(text: string): void;
  succeed(text: string): void;
  fail(text: string): void;
  stop(): void;
}

export interface Output {
  readonly json: boolean;
  readonly verboseOn: boolean;
  /** True when progress may animate on stderr (a person is watching). */
  readonly interactive: boolean;
  readonly stdoutIsTTY: boolean;
  readonly columns: number;
  readonly style: Style;
  /** The stream progress is drawn on (ora needs it). */
  readonly progressStream: OutStream;
  /** A line of data on stdout. */
  data(line: string): void;
  /** The one JSON document of a `--json` command. */
  document(value: unknown): void;
  /** Resolves once the document is written (with `--jq`, after jq ran); rejects with jq's error. */
  settle(): Promise<void>;
  /** With `--jq`: refuses an expression that does not compile (a dispatch checks before its run). */
  checkJq(): Promise<void>;
  info(line: string): void;
  warn(line: string): void;
  error(line: string): void;
  verbose(line: string): void;
  spinner(text: string): Promise<Spinner>;
  /** Rows of data: aligned columns on a TTY, tab-separated plain rows when piped. */
  table(head: string[], rows: string[][]): void;
}

const isSet = (v: string | undefined) => v !== undefined && v !== '' && v !== '0' && v !== 'false';
/** no-color.org: NO_COLOR present and not empty, whatever its value (NO_COLOR=0 too). */
const noColor = (env: Record<string, string | undefined>) => env.NO_COLOR !== undefined && env.NO_COLOR !== '';

export function colorLevel(opts: OutputOptions, stream: OutStream): 0 | 1 | 2 | 3 {
  if (opts.color === false || opts.json) return 0;
  const force = opts.env.FORCE_COLOR;
  if (force !== undefined) return force === '0' || force === 'false' ? 0 : 1;
  if (noColor(opts.env)) return 0;
  return stream.isTTY ? 1 : 0;
}

export function createOutput(opts: OutputOptions): Output {
  const { stdout, stderr } = opts;
  const interactive = Boolean(stderr.isTTY) && !opts.json && !isSet(opts.env.CI) && !noColor(opts.env) && opts.color !== false;
  const level = colorLevel(opts, stderr);
  const style = opts.style ?? PLAIN;
  if (style.level !== level) throw new Error(`internal: output with colour level ${level} given styles of level ${style.level} (ui/style.ts loadStyle)`);
  const columns = knownColumns(stdout.columns) ?? knownColumns(stderr.columns) ?? 100;
  const progressStream = withKnownWidth(stderr);
  // Every line may carry text of the service's or an agent's: its control characters are made
  // visible, svc's own colours kept (./visible.ts).
  const errColour = style.level > 0;
  const err = (line: string) => stderr.write(`${visibleKeepingStyle(line, errColour)}\n`);
  const outColour = colorLevel(opts, stdout) > 0;
  // With --jq the document is written once jq has run (it loads asynchronously): `settle` waits.
  let pending: Promise<void> = Promise.resolve();

  return {
    json: Boolean(opts.json) || opts.jq !== undefined,
    verboseOn: Boolean(opts.verbose),
    interactive,
    stdoutIsTTY: Boolean(stdout.isTTY),
    columns,
    style,
    progressStream,
    data: (line) => stdout.write(`${visibleKeepingStyle(line, outColour)}\n`),
    // JSON escapes C0 itself; DEL and C1 (which some terminals obey) get the same \u form, the
    // same value to any parser.
    document: (value) => {
      const jq = opts.jq;
      if (jq === undefined) {
        stdout.write(`${JSON.stringify(value, null, 2).replace(/[\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)}\n`);
        return;
      }
      // jq prints strings raw: what came from the service is shown as data() shows it.
      pending = pending.then(async () => {
        const { applyJq } = await import('./jq.js');
        stdout.write(visibleKeepingStyle(await applyJq(value, jq), outColour));
      });
    },
    settle: () => pending,
    async checkJq() {
      if (opts.jq === undefined) return;
      const { checkJq } = await import('./jq.js');
      await checkJq(opts.jq);
    },
    info: (line) => err(line),
    warn: (line) => err(style.yellow(line)),
    error: (line) => err(style.red(line)),
    verbose: (line) => {
      if (opts.verbose) err(style.dim(line));
    },
    async spinner(text) {
      if (!interactive) {
        err(text);
        return { text: () => {}, succeed: (t) => err(t), fail: (t) => err(t), stop: () => {} };
      }
      // ora is imported only when a spinner is really shown: it is not needed on the start-up path.
      const { default: ora } = await import('ora');
      // ora would check process.env.CI itself; the decision is made above, from the context's env.
      const shown = (t: string) => visibleKeepingStyle(t, errColour);
      const s = ora({ text: shown(text), stream: progressStream, color: 'cyan', isEnabled: true }).start();
      return {
        text: (t) => void (s.text = shown(t)),
        succeed: (t) => void s.succeed(shown(t)),
        fail: (t) => void s.fail(shown(t)),
        stop: () => void s.stop(),
      };
    },
    table(head, given) {
      const rows = given.map((row) => row.map(visible));
      if (!stdout.isTTY) {
        for (const row of rows) stdout.write(`${row.join('\t')}\n`);
        return;
      }
      stdout.write(formatTable(head, rows, columns, style));
    },
  };
}

/** A width a terminal reported, or undefined when it is none (0, negative, not a number). */
export function knownColumns(columns: number | undefined): number | undefined {
  return typeof columns === 'number' && Number.isFinite(columns) && columns > 0 ? columns : undefined;
}

/**
 * The stream as ora sees it: a terminal reporting 0 columns (`script` without a terminal on its
 * stdin, some CI consoles) reports no width instead, so ora falls back to its default. ora divides
 * by the width to count the lines it must clear: 0 made it Infinity, and it wrote cursor-up codes
 * forever (hundreds of MB) with the event loop blocked, so the agent was never reaped. The width is
 * read at every access, so a resized terminal is still followed.
 */
export function withKnownWidth(stream: OutStream): OutStream {
  return new Proxy(stream, {
    get(target, prop) {
      if (prop === 'columns') return knownColumns(target.columns);
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/**
 * Aligns columns and fits them to the terminal width so rows never wrap: the last column gives way
 * first (down to 8 characters), then the widest of the others but the first (an id stays whole),
 * down to 6; a cut cell ends in `…`.
 */
export function formatTable(head: string[], rows: string[][], width: number, style: Style): string {
  const all = [head, ...rows];
  const widths = fitWidths(
    head.map((_, i) => Math.max(...all.map((r) => (r[i] ?? '').length))),
    width,
  );
  const lines = all.map((row, r) => {
    const cells = row.map((cell, i) => {
      const room = widths[i] ?? cell.length;
      return i === row.length - 1 ? cut(cell, room) : cut(cell, room).padEnd(room);
    });
    const line = cells.join('  ').trimEnd();
    return r === 0 ? style.bold(line) : line;
  });
  return `${lines.join('\n')}\n`;
}

function fitWidths(natural: number[], width: number): number[] {
  const w = [...natural];
  const last = w.length - 1;
  const over = () => w.reduce((sum, n) => sum + n, 0) + 2 * last - width;
  if (last < 0 || over() <= 0) return w;
  w[last] = Math.max(Math.min(natural[last]!, 8), w[last]! - over());
  while (over() > 0) {
    let widest = -1;
    for (let i = 1; i < last; i++) if (w[i]! > 6 && (widest < 0 || w[i]! > w[widest]!)) widest = i;
    if (widest < 0) break;
    w[widest]!--;
  }
  return w;
}

function cut(text: string, room: number): string {
  return text.length <= room ? text : `${text.slice(0, room - 1)}…`;
}
