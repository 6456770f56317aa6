// Text that came from the service or from an agent (titles, reasons, errors, logs) is printed with
// its control characters made visible (docs/agents.md): a work item titled with OSC 0 (the window
// title), OSC 52 (a clipboard write) or `ESC[2K\r` (a rewritten line) must not reach the terminal
// as a command. Newline and tab stay; every other C0 character, DEL and the C1 range are written as
// `\xNN` (or `\r`, `\e`), which a reader can see and nothing executes.
// C0 without \t and \n, DEL, C1 (U+0080–U+009F, which some terminals obey as 8-bit escapes).
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;
const NAMED: Record<string, string> = { '\r': '\\r', '\u001b': '\\e' };
const show = (c: string): string => NAMED[c] ?? `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`;

/** `text` with every control character but newline and tab made visible. */
export function visible(text: string): string {
  CONTROL.lastIndex = 0;
  return CONTROL.test(text) ? text.replace(CONTROL, show) : text;
}

// What chalk writes: SGR sequences only (`ESC[…m`), kept where svc's own colour is on.
const OWN_STYLE = /(\u001b\[[0-9;]*m)/;

/**
 * For lines svc composed with its own colours around foreign text: the colour codes stay, every
 * other control character is made visible. With colour off, chalk wrote none, so nothing stays.
 */
export function visibleKeepingStyle(text: string, colour: boolean): string {
  if (!colour) return visible(text);
  return text
    .split(OWN_STYLE)
    .map((part, i) => (i % 2 === 1 ? part : visible(part)))
    .join('');
}
