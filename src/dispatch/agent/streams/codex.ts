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
import { type EventLines, endLine, outputLines, shellLine, textLines, thinkingLines, toolLine } from './render.js';

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

/**
 * Codex's events as readable lines: a command when it starts (`item.started`), its output and a
 * non-zero exit when it completes, the agent's messages, reasoning, file changes and tool calls
 * as items complete, a turn's end with its tokens.
 */
export function codexLines(): EventLines {
  return {
    lines(event) {
      switch (event.type) {
        case 'thread.started':
        case 'turn.started':
        case 'item.updated':
          return [];
        case 'item.started': {
          const item = isObject(event.item) ? event.item : {};
          return item.type === 'command_execution' ? shellLine(str(item.command) ?? '') : [];
        }
        case 'item.completed':
          return isObject(event.item) ? completed(event.item) : null;
        case 'turn.completed': {
          const usage = isObject(event.usage) ? event.usage : {};
          return [endLine(null, { tokensIn: num(usage.input_tokens), tokensOut: num(usage.output_tokens) })];
        }
        case 'turn.failed': {
          const error = isObject(event.error) ? event.error : {};
          return [endLine(readableMessage(str(error.message) ?? 'error'), {})];
        }
        case 'error':
          return [`error: ${readableMessage(str(event.message) ?? 'stream error')}`];
        default:
          return null;
      }
    },
  };
}

function completed(item: JsonObject): string[] | null {
  switch (item.type) {
    case 'agent_message':
      return textLines(str(item.text) ?? '');
    case 'reasoning':
      return thinkingLines(str(item.text) ?? '');
    case 'command_execution': {
      const exit = num(item.exit_code);
      return [...outputLines(str(item.aggregated_output) ?? ''), ...(exit ? [`  exit ${exit}`] : [])];
    }
    case 'file_change':
      return (Array.isArray(item.changes) ? item.changes.filter(isObject) : []).map((c) => toolLine(str(c.kind) ?? 'change', str(c.path) ?? ''));
    case 'mcp_tool_call':
      return [toolLine([str(item.server), str(item.tool)].filter(Boolean).join('.') || 'mcp tool', item.arguments)];
    case 'web_search':
      return [toolLine('web search', str(item.query) ?? '')];
    case 'todo_list':
      return (Array.isArray(item.items) ? item.items.filter(isObject) : []).map((t) => `${t.completed === true ? '[x]' : '[ ]'} ${str(t.text) ?? ''}`);
    case 'error':
      return [`warning: ${str(item.message) ?? 'error'}`];
    default:
      return null;
  }
}
