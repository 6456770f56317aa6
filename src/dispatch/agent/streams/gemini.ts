// Gemini CLI `--output-format stream-json` (google-gemini/gemini-cli packages/core/src/output):
// `init`, `message`, `tool_use`, `tool_result`, `error` (non-fatal warnings) and a final
//   {"type":"result","status":"success"|"error","error":{"type":"…","message":"…"},
//    "stats":{"total_tokens":…,"input_tokens":…,"output_tokens":…,"cached":…,"duration_ms":…}}
// Gemini reports tokens, never a price.
import { JsonLinesParser, type JsonObject, agentError, isObject, num, str } from './json-lines.js';

export class GeminiStreamParser extends JsonLinesParser {
  readonly format = 'gemini-stream-json' as const;

  protected onEvent(event: JsonObject): void {
    if (event.type !== 'result') return;
    const error = isObject(event.error) ? event.error : undefined;
    this.result =
      event.status === 'success' && !error
        ? { outcome: 'succeeded', reason: null }
        : { outcome: 'failed', reason: agentError(str(error?.message) ?? str(error?.type) ?? str(event.status)) };
    const stats = isObject(event.stats) ? event.stats : {};
    const tokensIn = num(stats.input_tokens);
    const tokensOut = num(stats.output_tokens);
    this.spend = {
      ...(tokensIn !== undefined ? { tokensIn } : {}),
      ...(tokensOut !== undefined ? { tokensOut } : {}),
    };
  }
}
