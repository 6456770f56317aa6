// Codex `exec --json`: JSON Lines of thread events (openai/codex codex-rs/exec/src/exec_events.rs):
//   {"type":"turn.completed","usage":{"input_tokens":…,"cached_input_tokens":…,"output_tokens":…}}
//   {"type":"turn.failed","error":{"message":"…"}}
//   {"type":"error","message":"…"}            (unrecoverable stream error)
// Codex reports tokens, never a price, so costUsd stays absent.
import { JsonLinesParser, type JsonObject, add, agentError, isObject, num, str } from './json-lines.js';

export class CodexJsonParser extends JsonLinesParser {
  readonly format = 'codex-json' as const;
  private fatal: string | null = null;

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
        // A fatal stream error earlier in the run still fails the leg.
        this.result = this.fatal
          ? { outcome: 'failed', reason: agentError(this.fatal) }
          : { outcome: 'succeeded', reason: null };
        break;
      }
      case 'turn.failed': {
        const error = isObject(event.error) ? event.error : {};
        this.result = { outcome: 'failed', reason: agentError(str(error.message)) };
        break;
      }
      case 'error':
        this.fatal = str(event.message) ?? 'stream error';
        this.result = { outcome: 'failed', reason: agentError(this.fatal) };
        break;
      default:
        break;
    }
  }
}
