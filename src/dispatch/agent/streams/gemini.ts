// Gemini CLI `--output-format stream-json` (google-gemini/gemini-cli packages/core/src/output):
// `init`, `message`, `tool_use`, `tool_result`, `error` and a final
//   {"type":"result","status":"success"|"error","error":{"type":"…","message":"…"},
//    "stats":{"total_tokens":…,"input_tokens":…,"output_tokens":…,"cached":…,"duration_ms":…}}
// A failed turn may end with a bare `{"status":"error"}` and exit 0, its message only in the
// `error` event before it ("Model stream ended without a finish reason."; seen with 0.61.0), so the
// last `error` event's message is kept for the reason. Gemini reports tokens, never a price.
import { JsonLinesParser, type JsonObject, agentError, isObject, num, readableMessage, str } from './json-lines.js';

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
