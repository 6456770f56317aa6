// OpenAI Responses API (POST …/responses), as Codex calls it through a custom model provider.
import type { ServerResponse } from 'node:http';
import { pickShell, sse, type Cut, type Reply, type Turn, type Wire } from '../mock-model.js';

type Tool = { type?: string; name?: string; parameters?: unknown };
type Item = { type?: string };

export const responses: Wire = {
  name: 'responses',
  matches: (method, path) => method === 'POST' && /\/responses(\?|$)/.test(path),
  read(_path, body): Turn {
    const tools = Array.isArray(body.tools) ? (body.tools as Tool[]) : [];
    const offered = tools.filter((t) => typeof t.name === 'string').map((t) => ({ name: t.name!, schema: t.parameters }));
    const input = Array.isArray(body.input) ? (body.input as Item[]) : [];
    return {
      model: typeof body.model === 'string' ? body.model : undefined,
      stream: body.stream === true,
      tools: offered.map((t) => t.name),
      shell: pickShell(offered, ['shell_command', 'exec_command', 'shell']),
      hasToolResult: input.some((i) => i.type === 'function_call_output' || i.type === 'custom_tool_call_output'),
    };
  },
  answer(res: ServerResponse, _turn: Turn, reply: Reply, cut: Cut) {
    const id = `resp_${Date.now().toString(36)}`;
    const usage = {
      input_tokens: reply.usage.input,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: reply.usage.output,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: reply.usage.input + reply.usage.output,
    };
    const created = { event: 'response.created', data: { type: 'response.created', response: { id, status: 'in_progress', model: reply.model } } };
    if (reply.kind === 'stream-error') {
      sse(
        res,
        [
          created,
          {
            event: 'response.failed',
            data: { type: 'response.failed', response: { id, status: 'failed', error: { code: 'invalid_prompt', message: reply.text } } },
          },
        ],
        false,
      );
      return;
    }
    const item = reply.tool
      ? { type: 'function_call', id: `fc_${id}`, call_id: `call_${id}`, name: reply.tool.name, arguments: JSON.stringify(reply.tool.args), status: 'completed' }
      : { type: 'message', id: `msg_${id}`, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: reply.text, annotations: [] }] };
    sse(
      res,
      [
        created,
        { event: 'response.output_item.added', data: { type: 'response.output_item.added', output_index: 0, item } },
        { event: 'response.output_item.done', data: { type: 'response.output_item.done', output_index: 0, item } },
        { event: 'response.completed', data: { type: 'response.completed', response: { id, status: 'completed', model: reply.model, output: [item], usage } } },
      ],
      cut,
    );
  },
  errorBody: (status, message) => ({ error: { message, type: status === 400 ? 'invalid_request_error' : 'server_error', code: null } }),
};
