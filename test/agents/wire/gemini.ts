// Gemini API (POST /v1beta/models/{model}:generateContent | :streamGenerateContent?alt=sse), as
// Gemini CLI calls it through GOOGLE_GEMINI_BASE_URL.
import type { ServerResponse } from 'node:http';
import { pickShell, sse, type Cut, type Reply, type Turn, type Wire } from '../mock-model.js';

type Part = { functionResponse?: unknown };
type Decl = { name?: string; parameters?: unknown; parametersJsonSchema?: unknown };

export const gemini: Wire = {
  name: 'gemini',
  matches: (method, path) => method === 'POST' && /\/models\/[^/:]+:(stream)?[gG]enerateContent/.test(path),
  read(path, body): Turn {
    const decls = (Array.isArray(body.tools) ? (body.tools as { functionDeclarations?: Decl[] }[]) : []).flatMap((t) => t.functionDeclarations ?? []);
    const offered = decls.filter((d) => typeof d.name === 'string').map((d) => ({ name: d.name!, schema: d.parametersJsonSchema ?? d.parameters }));
    const config = (body.generationConfig ?? {}) as { responseMimeType?: string; responseJsonSchema?: unknown; responseSchema?: unknown };
    const contents = Array.isArray(body.contents) ? (body.contents as { parts?: Part[] }[]) : [];
    return {
      model: decodeURIComponent(/\/models\/([^/:]+):/.exec(path)?.[1] ?? '') || undefined,
      stream: path.includes(':streamGenerateContent'),
      tools: offered.map((t) => t.name),
      shell: pickShell(offered, ['run_shell_command']),
      hasToolResult: contents.some((c) => (c.parts ?? []).some((p) => p.functionResponse !== undefined)),
      jsonSchema: config.responseMimeType === 'application/json' ? (config.responseJsonSchema ?? config.responseSchema ?? {}) : undefined,
    };
  },
  answer(res: ServerResponse, turn: Turn, reply: Reply, cut: Cut) {
    const usageMetadata = {
      promptTokenCount: reply.usage.input,
      candidatesTokenCount: reply.usage.output,
      totalTokenCount: reply.usage.input + reply.usage.output,
    };
    // Side requests in JSON mode (model routing, next-speaker checks) want an object of their schema.
    const text = turn.jsonSchema !== undefined ? JSON.stringify(fill(turn.jsonSchema as Schema)) : (reply.text ?? '');
    const parts = reply.tool ? [{ functionCall: { name: reply.tool.name, args: reply.tool.args } }] : [{ text }];
    const answer = { candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }], usageMetadata, modelVersion: reply.model };
    if (!turn.stream) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
      return;
    }
    if (reply.kind === 'stream-error') {
      sse(res, [{ data: { error: { code: 400, message: reply.text, status: 'INVALID_ARGUMENT' } } }], false);
      return;
    }
    // A first chunk of text, so a cut stream has delivered something before it breaks.
    const first = { candidates: [{ content: { role: 'model', parts: [{ text: 'Working on it. ' }] }, index: 0 }], modelVersion: reply.model };
    sse(res, [{ data: first }, { data: answer }], cut);
  },
  errorBody: (status, message) => ({ error: { code: status, message, status: status === 400 ? 'INVALID_ARGUMENT' : 'INTERNAL' } }),
};

type Schema = { type?: string | string[]; enum?: unknown[]; properties?: Record<string, Schema>; items?: Schema; minimum?: number };

/** The smallest value of a JSON schema: first enum value, minimum or 1, "mock", one-level objects. */
function fill(schema: Schema): unknown {
  if (schema.enum?.length) return schema.enum[0];
  const type = String(Array.isArray(schema.type) ? schema.type[0] : (schema.type ?? 'object')).toLowerCase();
  if (type === 'string') return 'mock';
  if (type === 'number' || type === 'integer') return schema.minimum ?? 1;
  if (type === 'boolean') return false;
  if (type === 'array') return [];
  return Object.fromEntries(Object.entries(schema.properties ?? {}).map(([k, v]) => [k, fill(v)]));
}
