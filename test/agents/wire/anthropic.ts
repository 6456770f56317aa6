// Anthropic Messages API (POST /v1/messages), as Claude Code calls it through ANTHROPIC_BASE_URL.
import type { ServerResponse } from 'node:http';
import { pickShell, sse, type Cut, type Reply, type Turn, type Wire } from '../mock-model.js';

type Block = { type?: string };
type Message = { content?: unknown };

export const anthropic: Wire = {
  name: 'anthropic',
  matches: (method, path) => method === 'POST' && /^\/v1\/messages(\?|$)/.test(path),
  read(_path, body): Turn {
    const tools = Array.isArray(body.tools) ? (body.tools as { name?: string; input_schema?: unknown }[]) : [];
    const offered = tools.filter((t) => typeof t.name === 'string').map((t) => ({ name: t.name!, schema: t.input_schema }));
    const messages = Array.isArray(body.messages) ? (body.messages as Message[]) : [];
    const hasToolResult = messages.some((m) => Array.isArray(m.content) && (m.content as Block[]).some((b) => b.type === 'tool_result'));
    return {
      model: typeof body.model === 'string' ? body.model : undefined,
      stream: body.stream === true,
      tools: offered.map((t) => t.name),
      shell: pickShell(offered, ['Bash']),
      hasToolResult,
    };
  },
  answer(res: ServerResponse, turn: Turn, reply: Reply, cut: Cut) {
    const id = `msg_${Date.now().toString(36)}`;
    const content =
      reply.kind === 'tool-call'
        ? [{ type: 'tool_use', id: `toolu_${id}`, name: reply.tool!.name, input: reply.tool!.args }]
        : [{ type: 'text', text: reply.text ?? '' }];
    const stop = reply.kind === 'tool-call' ? 'tool_use' : 'end_turn';
    const usage = { input_tokens: reply.usage.input, output_tokens: reply.usage.output, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
    if (!turn.stream) {
      // Claude Code falls back to a whole answer when a stream breaks: the model refuses there too.
      const refused = reply.kind === 'stream-error';
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id,
          type: 'message',
          role: 'assistant',
          model: reply.model,
          content: refused ? [] : content,
          stop_reason: refused ? 'refusal' : stop,
          stop_sequence: null,
          usage,
        }),
      );
      return;
    }
    const start = {
      event: 'message_start',
      data: {
        type: 'message_start',
        message: {
          id,
          type: 'message',
          role: 'assistant',
          model: reply.model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { ...usage, output_tokens: 1 },
        },
      },
    };
    if (reply.kind === 'stream-error') {
      sse(res, [start, { event: 'error', data: { type: 'error', error: { type: 'invalid_request_error', message: reply.text } } }], false);
      return;
    }
    const block = content[0]!;
    const events =
      block.type === 'tool_use'
        ? [
            { event: 'content_block_start', data: { type: 'content_block_start', index: 0, content_block: { ...block, input: {} } } },
            {
              event: 'content_block_delta',
              data: { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: JSON.stringify(reply.tool!.args) } },
            },
          ]
        : [
            { event: 'content_block_start', data: { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } } },
            { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: reply.text } } },
          ];
    sse(
      res,
      [
        start,
        ...events,
        { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
        {
          event: 'message_delta',
          data: { type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: reply.usage.output } },
        },
        { event: 'message_stop', data: { type: 'message_stop' } },
      ],
      cut,
    );
  },
  errorBody: (status, message) => ({ type: 'error', error: { type: status === 400 ? 'invalid_request_error' : 'api_error', message } }),
};
