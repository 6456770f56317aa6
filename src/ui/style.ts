// The styles svc's own lines use, and where they come from. With colour on, chalk (its level set
// by svc: output.ts colorLevel). With colour off (a pipe, NO_COLOR, --no-color, --json) chalk would
// return every text as it is, and importing it still builds every style it has and loads Node's
// tty and os: about 0.2 MB of a start-up's young heap (of `svc config get`'s 1.16 MB: past the
// first megabyte, so a scavenge on every start) and 1.3–3 ms of its run, measured. So chalk is
// imported only when colour is on, before the command runs (cli.ts, loadLazy), and the plain styles
// stand for it otherwise.
type Paint = (text: string) => string;

/** The part of chalk svc's output uses, one style at a time (no chains): a chalk instance is one. */
export interface Style {
  readonly level: number;
  bold: Paint;
  dim: Paint;
  red: Paint;
  green: Paint;
  yellow: Paint;
  cyan: Paint;
}

const same: Paint = (text) => text;

/** Colour off: each style returns its text unchanged, as chalk does at level 0. */
export const PLAIN: Style = { level: 0, bold: same, dim: same, red: same, green: same, yellow: same, cyan: same };

/** The style for colour level `level`: chalk's, imported now, or the plain one. */
export async function loadStyle(level: 0 | 1 | 2 | 3): Promise<Style> {
  if (level === 0) return PLAIN;
  const { Chalk } = await import('chalk');
  const chalk: Style = new Chalk({ level });
  return chalk;
}
