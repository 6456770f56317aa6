// A plain command's final message for its pull request: the tail of what it printed, read back from
// the leg's log (already redacted). An agent with a machine-readable stream has its parser's final
// message instead (LegResult.finalMessage).
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

/** Only the end of a log can hold the last words; a huge log is not read whole. */
const TAIL_BYTES = 256 * 1024;
const PLAIN_TAIL_LINES = 40;
const PLAIN_TAIL_CHARS = 8_000;

function readTail(file: string): string {
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    const len = Math.min(size, TAIL_BYTES);
    const buf = Buffer.alloc(len);
    readSync(fd, buf, 0, len, size - len);
    return buf.toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** The last lines of the leg whose log is `file`; null when it is empty or cannot be read. */
export function plainTailOfLog(file: string): string | null {
  try {
    const tail = readTail(file).split('\n').slice(-PLAIN_TAIL_LINES).join('\n').trim();
    if (!tail) return null;
    return tail.length > PLAIN_TAIL_CHARS ? tail.slice(-PLAIN_TAIL_CHARS) : tail;
  } catch {
    return null;
  }
}
