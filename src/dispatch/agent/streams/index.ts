// One parser per machine-readable agent format; `createStreamParser` picks it by name, and
// `createStreamRenderer` the same format's readable lines (render.ts).
import type { AgentCommand, StreamFormat, StreamParser } from '../types.js';
import { ClaudeStreamParser, claudeLines } from './claude.js';
import { CodexJsonParser, codexLines } from './codex.js';
import { GeminiStreamParser, geminiLines } from './gemini.js';
import { OpencodeJsonParser, opencodeLines } from './opencode.js';
import { type EventLines, StreamRenderer } from './render.js';

export { ClaudeStreamParser, CodexJsonParser, GeminiStreamParser, OpencodeJsonParser, StreamRenderer };

export const STREAM_FORMATS: readonly StreamFormat[] = ['claude-stream-json', 'codex-json', 'gemini-stream-json', 'opencode-json'];

/** A fresh parser for one leg (parsers keep state, so never share one between legs). */
export function createStreamParser(format: StreamFormat): StreamParser {
  switch (format) {
    case 'claude-stream-json':
      return new ClaudeStreamParser();
    case 'codex-json':
      return new CodexJsonParser();
    case 'gemini-stream-json':
      return new GeminiStreamParser();
    case 'opencode-json':
      return new OpencodeJsonParser();
  }
}

/** A fresh parser for the command's stream, or undefined when it has none. */
export function parserFor(command: AgentCommand): StreamParser | undefined {
  return command.stream ? createStreamParser(command.stream) : undefined;
}

const LINES: Record<StreamFormat, () => EventLines> = {
  'claude-stream-json': claudeLines,
  'codex-json': codexLines,
  'gemini-stream-json': geminiLines,
  'opencode-json': opencodeLines,
};

/** A fresh renderer for one leg's log; `format` null (aider, a plain `--agent-cmd`): lines as recorded. */
export function createStreamRenderer(format: StreamFormat | null): StreamRenderer {
  return new StreamRenderer(format ? LINES[format]() : null);
}
