// Codex `exec --json`: JSON Lines of thread events (openai/codex codex-rs/exec/src/exec_events.rs):
//   {"type":"turn.completed","usage":{"input_tokens":…,"cached_input_tokens":…,"output_tokens":…}}
//   {"type":"turn.failed","error":{"message":"…"}}
//   {"type":"error","message":"…"}
// Codex prints a top-level `error` for a retry too ("Reconnecting... 1/5 (stream disconnected …)")
// and then recovers: seen with 0.169.0, whose failed turns print `error` then `turn.failed`. So
// the last turn event decides; an `error` counts only when no turn event follows it (a crash).
// A message that is a provider's JSON error body reads as its inner message.
// Codex reports tokens, never a price, so costUsd stays absent.
import { JsonLinesParser, type JsonObject, add, agentError, isObject, num, readableMessage, str, words } from './json-lines.js';

export class CodexJsonParser extends JsonLinesParser {
  readonly format = 'codex-json' as const;

  protected onEvent(event: JsonObject): void {
    switch (event.type) {
      case 'turn.completed': {
        const usage = isObject(event.usage) ? event.usage : {};
        // cached_input_tokens is a subset of input_tokens: adding it would count it twice.
        const tokensIn = add(this.spend.tokensIn, num(usage.input_tokens));
        const tokensOut = add(this.spend.tokensOut, num(usage.output_tokens));
        this.spend = {
          ...(tokensIn !== undefined ? { tokensIn } : {}),
          ...(tokensOut !== undefined ? { tokensOut } : {}),
        };
        this.result = { outcome: 'succeeded', reason: null };
        break;
      }
      case 'turn.failed': {
        const error = isObject(event.error) ? event.error : {};
        const message = str(error.message);
        this.result = { outcome: 'failed', reason: agentError(message && readableMessage(message)) };
        break;
      }
      case 'item.completed':
        if (isObject(event.item) && event.item.type === 'agent_message') this.message = words(event.item.text) ?? this.message;
        break;
      case 'error': {
        const message = str(event.message);
        this.result = { outcome: 'failed', reason: agentError(message ? readableMessage(message) : 'stream error') };
        break;
      }
      default:
        break;
    }
  }
}
