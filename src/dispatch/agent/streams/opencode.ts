// opencode `run --format json` (packages/opencode/src/cli/cmd/run.ts): every line is
// {"type":…,"timestamp":…,"sessionID":…, …}. Each model call is a step:
//   {"type":"step_finish","part":{"type":"step-finish","reason":"tool-calls"|"stop"|…,"cost":0.0123,
//    "tokens":{"input":…,"output":…,"reasoning":…,"cache":{"read":…,"write":…}}}}
// `error` carries {"error":{"name":"…","data":{"message":"…"}}} and opencode exits 1. 1.18.33
// prints no `done` event: a clean run simply ends after a `step_finish` whose reason is not
// "tool-calls" (the model answered instead of calling another tool). A `done` event, which some
// versions print, decides the same way.
import { JsonLinesParser, type JsonObject, add, agentError, isObject, num, readableMessage, str, words } from './json-lines.js';
import { type EventLines, endLine, outputLines, shellLine, textLines, thinkingLines, toolLine } from './render.js';

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
        // A step that ends in tool calls is followed by another; any other reason ends the turn.
        if (str(part.reason) !== 'tool-calls') this.settle();
        break;
      }
      case 'text':
        if (isObject(event.part)) this.message = words(event.part.text) ?? this.message;
        break;
      case 'error': {
        const error = isObject(event.error) ? event.error : {};
        const data = isObject(error.data) ? error.data : {};
        const message = str(data.message) ?? str(error.message) ?? str(error.name) ?? 'error';
        this.failure ??= readableMessage(message);
        this.settle();
        break;
      }
      case 'done':
        this.settle();
        break;
      default:
        break;
    }
  }

  /** An error anywhere in the run fails it: opencode reports a session error once and stops. */
  private settle(): void {
    this.result = this.failure ? { outcome: 'failed', reason: agentError(this.failure) } : { outcome: 'succeeded', reason: null };
  }
}

/**
 * opencode's events as readable lines: each tool call with its output, the model's text and
 * reasoning, an error, and the end of the turn (the first step that does not end in tool calls)
 * with the spend of every step so far.
 */
export function opencodeLines(): EventLines {
  const spend: { tokensIn?: number; tokensOut?: number; costUsd?: number } = {};
  return {
    lines(event) {
      const part = isObject(event.part) ? event.part : {};
      switch (event.type) {
        case 'step_start':
        case 'done':
          return [];
        case 'tool_use':
          return toolUse(part);
        case 'text':
          return textLines(str(part.text) ?? '');
        case 'reasoning':
          return thinkingLines(str(part.text) ?? '');
        case 'step_finish': {
          const tokens = isObject(part.tokens) ? part.tokens : {};
          const cache = isObject(tokens.cache) ? tokens.cache : {};
          spend.tokensIn = add(add(add(spend.tokensIn, num(tokens.input)), num(cache.read)), num(cache.write));
          spend.tokensOut = add(add(spend.tokensOut, num(tokens.output)), num(tokens.reasoning));
          spend.costUsd = add(spend.costUsd, num(part.cost));
          return str(part.reason) === 'tool-calls' ? [] : [endLine(null, spend)];
        }
        case 'error': {
          const error = isObject(event.error) ? event.error : {};
          const data = isObject(error.data) ? error.data : {};
          const message = readableMessage(str(data.message) ?? str(error.message) ?? 'error');
          return [`error: ${[str(error.name), message].filter(Boolean).join(': ')}`];
        }
        default:
          return null;
      }
    },
  };
}

function toolUse(part: JsonObject): string[] {
  const state = isObject(part.state) ? part.state : {};
  const input = isObject(state.input) ? state.input : {};
  const call = part.tool === 'bash' && typeof input.command === 'string' ? shellLine(input.command) : [toolLine(str(part.tool) ?? 'tool', input)];
  if (state.status === 'error') return [...call, ...outputLines(str(state.error) ?? 'failed', 'error: ')];
  return [...call, ...outputLines(str(state.output) ?? '')];
}
