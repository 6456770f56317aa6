// Gemini CLI `--output-format stream-json` (google-gemini/gemini-cli packages/core/src/output):
// `init`, `message`, `tool_use`, `tool_result`, `error` and a final
//   {"type":"result","status":"success"|"error","error":{"type":"…","message":"…"},
//    "stats":{"total_tokens":…,"input_tokens":…,"output_tokens":…,"cached":…,"duration_ms":…}}
// A failed turn may end with a bare `{"status":"error"}` and exit 0, its message only in the
// `error` event before it ("Model stream ended without a finish reason."; seen with 0.61.0), so the
// last `error` event's message is kept for the reason. Gemini reports tokens, never a price.
import { JsonLinesParser, type JsonObject, agentError, isObject, num, readableMessage, str } from './json-lines.js';
import { type EventLines, endLine, outputLines, shellLine, textLines, toolLine } from './render.js';

export class GeminiStreamParser extends JsonLinesParser {
  readonly format = 'gemini-stream-json' as const;
  private lastError: string | undefined;

  protected onEvent(event: JsonObject): void {
    // Gemini streams its answer as assistant deltas: those since the last tool call are one message.
    if (event.type === 'message' && event.role === 'assistant' && typeof event.content === 'string') {
      this.message = (this.message ?? '') + event.content;
      return;
    }
    if (event.type === 'tool_use' || event.type === 'tool_result') {
      this.message = null;
      return;
    }
    if (event.type === 'error') {
      this.lastError = str(event.message) ?? this.lastError;
      return;
    }
    if (event.type !== 'result') return;
    const error = isObject(event.error) ? event.error : undefined;
    const message = str(error?.message) ?? this.lastError ?? str(error?.type) ?? str(event.status);
    this.result =
      event.status === 'success' && !error
        ? { outcome: 'succeeded', reason: null }
        : { outcome: 'failed', reason: agentError(message && readableMessage(message)) };
    const stats = isObject(event.stats) ? event.stats : {};
    const tokensIn = num(stats.input_tokens);
    const tokensOut = num(stats.output_tokens);
    this.spend = {
      ...(tokensIn !== undefined ? { tokensIn } : {}),
      ...(tokensOut !== undefined ? { tokensOut } : {}),
    };
  }
}

/**
 * Gemini's events as readable lines. The assistant's answer comes in pieces (`delta`): they are
 * gathered and shown as one text before the next event. The prompt (the user's message) is in
 * the run's prompt file, so it is not repeated.
 */
export function geminiLines(): EventLines {
  let said = '';
  const held = (): string[] => {
    const text = said;
    said = '';
    return textLines(text);
  };
  return {
    held,
    lines(event) {
      if (event.type === 'message') {
        if (event.role === 'assistant' && typeof event.content === 'string') said += event.content;
        return event.role === 'assistant' || event.role === 'user' ? [] : null;
      }
      const own = eventLines(event);
      return own === null ? null : [...held(), ...own];
    },
  };
}

function eventLines(event: JsonObject): string[] | null {
  switch (event.type) {
    case 'init':
      return [`started: ${str(event.model) ?? 'gemini'}`];
    case 'tool_use': {
      const params = isObject(event.parameters) ? event.parameters : {};
      return event.tool_name === 'run_shell_command' && typeof params.command === 'string'
        ? shellLine(params.command)
        : [toolLine(str(event.tool_name) ?? 'tool', params)];
    }
    case 'tool_result': {
      const error = isObject(event.error) ? event.error : undefined;
      if (event.status === 'error' || error) return outputLines(str(error?.message) ?? str(event.output) ?? 'failed', 'error: ');
      return outputLines(str(event.output) ?? '');
    }
    case 'error':
      return [`${event.severity === 'warning' ? 'warning' : 'error'}: ${str(event.message) ?? 'error'}`];
    case 'result': {
      const error = isObject(event.error) ? event.error : undefined;
      const failed = event.status !== 'success' || error !== undefined;
      const stats = isObject(event.stats) ? event.stats : {};
      const why = readableMessage(str(error?.message) ?? str(error?.type) ?? str(event.status) ?? 'error');
      return [endLine(failed ? why : null, { durationMs: num(stats.duration_ms), tokensIn: num(stats.input_tokens), tokensOut: num(stats.output_tokens) })];
    }
    default:
      return null;
  }
}
