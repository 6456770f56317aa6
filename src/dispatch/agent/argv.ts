// `--agent-cmd "CMD ARGS"` (docs/agents.md): split like a POSIX shell splits words, but never run
// through a shell. There is no expansion of variables, globs or command substitution, so a
// placeholder value (a title with `$(rm -rf /)` in it, say) can never become code: it is one argv
// element, substituted after splitting.
import { SvcError } from '../../api/errors.js';

/** A command line that cannot be split: a usage error (exit code 2). */
export class ArgvError extends SvcError {
  override readonly name = 'ArgvError';
  readonly kind = 'usage';
}

/**
 * Split a command line into words: blanks separate words; '…' is literal; "…" is literal except
 * that a backslash escapes `"`, `\`, `$`, `` ` `` and a newline; a backslash outside quotes escapes
 * any character; quotes glued to other text form one word (`--msg="a b"` is one word).
 */
export function splitCommand(line: string): string[] {
  const words: string[] = [];
  let word = '';
  // Distinguishes "no word yet" from an empty quoted word such as '' or "".
  let inWord = false;
  let i = 0;
  while (i < line.length) {
    const c = line[i]!;
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
      i++;
    } else if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) throw new ArgvError(`unterminated single quote in --agent-cmd: ${line}`);
      word += line.slice(i + 1, end);
      inWord = true;
      i = end + 1;
    } else if (c === '"') {
      i++;
      let closed = false;
      while (i < line.length) {
        const d = line[i]!;
        if (d === '"') {
          closed = true;
          i++;
          break;
        }
        if (d === '\\' && i + 1 < line.length && '"\\$`\n'.includes(line[i + 1]!)) {
          // Backslash-newline inside double quotes is a line continuation: both vanish.
          if (line[i + 1] !== '\n') word += line[i + 1];
          i += 2;
          continue;
        }
        word += d;
        i++;
      }
      if (!closed) throw new ArgvError(`unterminated double quote in --agent-cmd: ${line}`);
      inWord = true;
    } else if (c === '\\') {
      if (i + 1 >= line.length) throw new ArgvError(`trailing backslash in --agent-cmd: ${line}`);
      const next = line[i + 1]!;
      if (next !== '\n') {
        word += next;
        inWord = true;
      }
      i += 2;
    } else {
      word += c;
      inWord = true;
      i++;
    }
  }
  if (inWord) words.push(word);
  if (words.length === 0) throw new ArgvError('--agent-cmd is empty');
  return words;
}

/** Values of the placeholders an agent command line may use (docs/agents.md). */
export interface PlaceholderValues {
  prompt_file: string;
  key: string;
  workdir: string;
  branch: string;
  run_id: string;
  /** The prompt text itself: for agents that only take it as an argument (`promptVia: 'arg'`). */
  prompt?: string;
}

const PLACEHOLDER = /\{(prompt_file|key|workdir|branch|run_id|prompt)\}/g;

/**
 * Substitute placeholders inside each argument, in one pass, so a value that itself contains
 * `{key}` is never expanded again. Unknown `{words}` are left as they are (JSON in an argument).
 */
export function expandPlaceholders(argv: readonly string[], values: PlaceholderValues): string[] {
  return argv.map((arg) => arg.replace(PLACEHOLDER, (whole, name: keyof PlaceholderValues) => values[name] ?? whole));
}
