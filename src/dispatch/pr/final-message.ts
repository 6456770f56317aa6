// The agent's final message, read back from the leg's log (already redacted). A machine-readable
// stream carries it in its terminal events (Claude Code's `result`, Codex's last `agent_message`,
// opencode's last `text` part, Gemini's trailing assistant deltas); a plain command's is the tail
// of what it printed. Reading the log rather than stdout keeps this step outside the agent pipe.
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

/** Only the end of a log can hold the last words; a huge log is not read whole. */
const TAIL_BYTES = 256 * 1024;
const PLAIN_TAIL_LINES = 40;
const PLAIN_TAIL_CHARS = 8_000;

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const text = (v: unknown): string | null => (typeof v === 'string' && v.trim() ? v.trim() : null);

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

/** The final message in `log` (the text of a leg's log), or null. */
export function finalMessageOf(log: string): string | null {
  const lines = log.split('\n');
  let sawJson = false;
  let gemini = '';
  let last: string | null = null;
  for (const raw of lines) {
    const t = raw.trim();
    if (!t.startsWith('{')) continue;
    let ev: unknown;
    try {
      ev = JSON.parse(t);
    } catch {
      continue;
    }
    if (!isObj(ev) || typeof ev.type !== 'string') continue;
    sawJson = true;
    if (ev.type === 'result') last = text(ev.result) ?? last;
    else if (ev.type === 'item.completed' && isObj(ev.item) && ev.item.type === 'agent_message') last = text(ev.item.text) ?? last;
    else if (ev.type === 'text' && isObj(ev.part)) last = text(ev.part.text) ?? last;
    else if (ev.type === 'message' && ev.role === 'assistant' && typeof ev.content === 'string') gemini += ev.content;
    else if (ev.type === 'tool_use' || ev.type === 'tool_result') gemini = '';
  }
  if (sawJson) return last ?? text(gemini);
  const tail = lines.slice(-PLAIN_TAIL_LINES).join('\n').trim();
  if (!tail) return null;
  return tail.length > PLAIN_TAIL_CHARS ? tail.slice(-PLAIN_TAIL_CHARS) : tail;
}

/** The final message of the leg whose log is `file`; null when it cannot be read. */
export function finalMessageOfLog(file: string): string | null {
  try {
    return finalMessageOf(readTail(file));
  } catch {
    return null;
  }
}
