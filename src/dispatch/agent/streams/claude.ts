// Claude Code `-p --output-format stream-json --verbose`: one JSON message per line (`system`
// init, `assistant`, `user`, …) ending with a `result` message:
//   {"type":"result","subtype":"success"|"error_max_turns"|"error_during_execution",
//    "is_error":false,"result":"…","total_cost_usd":0.12,
//    "usage":{"input_tokens":…,"cache_creation_input_tokens":…,"cache_read_input_tokens":…,"output_tokens":…}}
// An API failure (HTTP 400, a refusal) ends with `"subtype":"success","is_error":true` and the
// message in `result` ("API Error: 400 …"; seen with 2.1.330): the subtype names how the loop
// ended, not whether the turn worked, so it is left out of the reason when it says "success".
import { JsonLinesParser, type JsonObject, add, agentError, isObject, num, str, words } from './json-lines.js';
import { type EventLines, endLine, outputLines, shellLine, textLines, thinkingLines, toolLine } from './render.js';

export class ClaudeStreamParser extends JsonLinesParser {
  readonly format = 'claude-stream-json' as const;

  protected onEvent(event: JsonObject): void {
    if (event.type !== 'result') return;
    this.message = words(event.result) ?? this.message;
    const subtype = str(event.subtype);
    const failed = event.is_error === true || (subtype !== undefined && subtype !== 'success');
    if (failed) {
      const message = str(event.result) ?? (Array.isArray(event.errors) ? event.errors.filter((e) => typeof e === 'string').join('; ') : undefined);
      const kind = subtype === 'success' ? undefined : subtype;
      this.result = { outcome: 'failed', reason: agentError([kind, message].filter(Boolean).join(': ') || undefined) };
    } else {
      this.result = { outcome: 'succeeded', reason: null };
    }
    // Cache reads and writes are input the model processed: they count as tokens in.
    const usage = isObject(event.usage) ? event.usage : {};
    let tokensIn = num(usage.input_tokens);
    tokensIn = add(tokensIn, num(usage.cache_creation_input_tokens));
    tokensIn = add(tokensIn, num(usage.cache_read_input_tokens));
    // A result per turn would be cumulative, so the last one wins rather than being summed.
    this.spend = {
      ...(tokensIn !== undefined ? { tokensIn } : {}),
      ...(num(usage.output_tokens) !== undefined ? { tokensOut: num(usage.output_tokens)! } : {}),
      ...((num(event.total_cost_usd) ?? num(event.cost_usd)) !== undefined ? { costUsd: (num(event.total_cost_usd) ?? num(event.cost_usd))! } : {}),
    };
  }
}

/**
 * Claude's events as readable lines: `system` init names the model, an `assistant` message its
 * text, tool calls and thinking, a `user` message the tools' results (the prompt itself is in the
 * run's prompt file), `result` the end with its spend.
 */
export function claudeLines(): EventLines {
  return {
    lines(event) {
      switch (event.type) {
        case 'system':
          return event.subtype === 'init' ? [`started: ${[str(event.model), str(event.cwd) && `in ${event.cwd}`].filter(Boolean).join(' ')}`] : null;
        case 'assistant':
          return contentOf(event).flatMap(assistantPart);
        case 'user':
          return contentOf(event).flatMap(toolResult);
        case 'result':
          return [resultLine(event)];
        default:
          return null;
      }
    },
  };
}

function contentOf(event: JsonObject): JsonObject[] {
  const message = isObject(event.message) ? event.message : {};
  return Array.isArray(message.content) ? message.content.filter(isObject) : [];
}

function assistantPart(part: JsonObject): string[] {
  if (part.type === 'text') return textLines(str(part.text) ?? '');
  if (part.type === 'thinking') return thinkingLines(str(part.thinking) ?? '');
  if (part.type === 'tool_use' || part.type === 'server_tool_use') {
    const input = isObject(part.input) ? part.input : {};
    return part.name === 'Bash' && typeof input.command === 'string' ? shellLine(input.command) : [toolLine(str(part.name) ?? 'tool', input)];
  }
  return [];
}

function toolResult(part: JsonObject): string[] {
  if (part.type !== 'tool_result') return [];
  const content = Array.isArray(part.content)
    ? part.content
        .filter(isObject)
        .map((c) => str(c.text) ?? '')
        .join('\n')
    : (str(part.content) ?? '');
  return outputLines(content, part.is_error === true ? 'error: ' : '');
}

function resultLine(event: JsonObject): string {
  const subtype = str(event.subtype);
  const failed = event.is_error === true || (subtype !== undefined && subtype !== 'success');
  const why = [subtype === 'success' ? undefined : subtype, failed ? str(event.result) : undefined].filter(Boolean).join(': ');
  const usage = isObject(event.usage) ? event.usage : {};
  const tokensIn = add(add(num(usage.input_tokens), num(usage.cache_creation_input_tokens)), num(usage.cache_read_input_tokens));
  return endLine(failed ? why || 'error' : null, {
    turns: num(event.num_turns),
    durationMs: num(event.duration_ms),
    costUsd: num(event.total_cost_usd) ?? num(event.cost_usd),
    tokensIn,
    tokensOut: num(usage.output_tokens),
  });
}
