// One parser per machine-readable agent format; `createStreamParser` picks it by name.
import type { AgentCommand, StreamFormat, StreamParser } from '../types.js';
import { ClaudeStreamParser } from './claude.js';
import { CodexJsonParser } from './codex.js';
import { GeminiStreamParser } from './gemini.js';
import { OpencodeJsonParser } from './opencode.js';

export { ClaudeStreamParser, CodexJsonParser, GeminiStreamParser, OpencodeJsonParser };

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
