// OpenAI-compatible chat completions (POST …/chat/completions), as opencode's openai-compatible
// provider calls it.
import type { ServerResponse } from 'node:http';
import { pickShell, sse, type Cut, type Reply, type Turn, type Wire } from '../mock-model.js';

type Tool = { function?: { name?: string; parameters?: unknown } };

export const chat: Wire = {
  name: 'chat',
  matches: (method, path) => method === 'POST' && /\/chat\/completions(\?|$)/.test(path),
  read(_path, body): Turn {
    const tools = Array.isArray(body.tools) ? (body.tools as Tool[]) : [];
    const offered = tools.filter((t) => typeof t.function?.name === 'string').map((t) => ({ name: t.function!.name!, schema: t.function!.parameters }));
    const messages = Array.isArray(body.messages) ? (body.messages as { role?: string }[]) : [];
    return {
      model: typeof body.model === 'string' ? body.model : undefined,
      stream: body.stream === true,
      tools: offered.map((t) => t.name),
      shell: pickShell(offered, ['bash']),
      hasToolResult: messages.some((m) => m.role === 'tool'),
    };
  },
  answer(res: ServerResponse, turn: Turn, reply: Reply, cut: Cut) {
    const id = `chatcmpl-${Date.now().toString(36)}`;
    const usage = { prompt_tokens: reply.usage.input, completion_tokens: reply.usage.output, total_tokens: reply.usage.input + reply.usage.output };
    const toolCalls = reply.tool
      ? [{ index: 0, id: `call_${id}`, type: 'function', function: { name: reply.tool.name, arguments: JSON.stringify(reply.tool.args) } }]
      : undefined;
    const finish = reply.kind === 'tool-call' ? 'tool_calls' : 'stop';
    if (!turn.stream) {
      res.writeHead(200, { 'content-type': 'application/json' });
      const message = toolCalls
        ? { role: 'assistant', content: null, tool_calls: toolCalls.map(({ index: _i, ...c }) => c) }
        : { role: 'assistant', content: reply.text };
      res.end(
        JSON.stringify({ id, object: 'chat.completion', created: 0, model: reply.model, choices: [{ index: 0, message, finish_reason: finish }], usage }),
      );
      return;
    }
    const chunk = (delta: unknown, finishReason: string | null, extra: Record<string, unknown> = {}) => ({
      data: { id, object: 'chat.completion.chunk', created: 0, model: reply.model, choices: [{ index: 0, delta, finish_reason: finishReason }], ...extra },
    });
    if (reply.kind === 'stream-error') {
      sse(
        res,
        [
          chunk({ role: 'assistant', content: '' }, null),
          { data: { error: { message: reply.text, type: 'invalid_request_error', code: 'context_length_exceeded' } } },
        ],
        false,
      );
      return;
    }
    sse(
      res,
      [
        chunk({ role: 'assistant', content: '' }, null),
        chunk(toolCalls ? { tool_calls: toolCalls } : { content: reply.text }, null),
        chunk({}, finish),
        { data: { id, object: 'chat.completion.chunk', created: 0, model: reply.model, choices: [], usage } },
        { data: '[DONE]' },
      ],
      cut,
    );
  },
  errorBody: (status, message) => ({ error: { message, type: status === 400 ? 'invalid_request_error' : 'server_error', code: null } }),
};
