// opencode `run --format json` (packages/opencode/src/cli/cmd/run.ts): every line is
// {"type":…,"timestamp":…,"sessionID":…, …}. `step_finish` carries the step's spend in
//   "part":{"type":"step-finish","cost":0.0123,"tokens":{"input":…,"output":…,"reasoning":…,"cache":{"read":…,"write":…}}}
// `error` carries {"error":{"name":"…","data":{"message":"…"}}} (and opencode exits 1), and recent
// versions end a clean run with {"type":"done","reason":"idle"}. Older versions send no `done`:
// without an error, the exit code then decides.
import { JsonLinesParser, type JsonObject, add, agentError, isObject, num, str } from './json-lines.js';

export class OpencodeJsonParser extends JsonLinesParser {
  readonly format = 'opencode-json' as const;
  private failure: string | null = null;

  protected onEvent(event: JsonObject): void {
    switch (event.type) {
      case 'step_finish': {
        const part = isObject(event.part) ? event.part : {};
        const tokens = isObject(part.tokens) ? part.tokens : {};
        const cache = isObject(tokens.cache) ? tokens.cache : {};
        // Steps are separate model calls: their spend adds up. Cache reads/writes are input too.
        let tokensIn = add(this.spend.tokensIn, num(tokens.input));
        tokensIn = add(tokensIn, num(cache.read));
        tokensIn = add(tokensIn, num(cache.write));
        const tokensOut = add(add(this.spend.tokensOut, num(tokens.output)), num(tokens.reasoning));
        const costUsd = add(this.spend.costUsd, num(part.cost));
        this.spend = {
          ...(tokensIn !== undefined ? { tokensIn } : {}),
          ...(tokensOut !== undefined ? { tokensOut } : {}),
          ...(costUsd !== undefined ? { costUsd } : {}),
        };
        break;
      }
      case 'error': {
        const error = isObject(event.error) ? event.error : {};
        const data = isObject(error.data) ? error.data : {};
        this.failure ??= str(data.message) ?? str(error.name) ?? str(error.message) ?? 'error';
        this.result = { outcome: 'failed', reason: agentError(this.failure) };
        break;
      }
      case 'done':
        this.result = this.failure
          ? { outcome: 'failed', reason: agentError(this.failure) }
          : { outcome: 'succeeded', reason: null };
        break;
      default:
        break;
    }
  }
}
