// A scripted model server for the real agent CLIs, on loopback only. It speaks the four wire
// formats the agents use — Anthropic Messages (Claude Code), OpenAI Responses (Codex), Gemini
// generateContent (Gemini CLI) and OpenAI chat completions (opencode) — always as a streamed
// answer where the agent asks for one. The script is the same for every format: a request that
// offers a shell tool and holds no result of it yet gets one call of that tool with `command`; a
// request that holds the tool's result gets a closing text; anything else (titles, summaries,
// routing) gets a short text. `fault` breaks it the way a real provider breaks. Every request is
// recorded (path, model, whether it was the agent's main turn) so tests can see what reached it.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { anthropic } from './wire/anthropic.js';
import { chat } from './wire/chat.js';
import { gemini } from './wire/gemini.js';
import { responses } from './wire/responses.js';

export type Fault =
  /** Every request is refused with HTTP 400 and `FAULT_MESSAGE`. */
  | 'http400'
  /** The first main-turn request gets HTTP 500; the agent's retry succeeds. */
  | 'http500-once'
  /** The first main-turn stream is cut after its first event; the agent's retry succeeds. */
  | 'cut-once'
  /** The first main-turn stream ends cleanly after its first event, without its finish. */
  | 'truncate-once'
  /** Every main-turn request gets HTTP 200 whose stream carries a provider error instead of an answer. */
  | 'in-stream-error';

export const FAULT_MESSAGE = 'mock refuses: unsupported value for parameter temperature';

export interface Scenario {
  /** The shell command the model asks the agent to run. */
  command: string;
  fault?: Fault;
}

export interface RecordedRequest {
  method: string;
  path: string;
  model: string | undefined;
  /** It offered a shell tool: the agent's own turn, not a side request. */
  main: boolean;
  answered: 'tool-call' | 'text' | 'http400' | 'http500' | 'cut' | 'truncated' | 'stream-error' | 'not-found';
  /** Names of the tools the request offered. */
  tools: string[];
}

/** What a wire format tells the server about one parsed request. */
export interface Turn {
  model: string | undefined;
  stream: boolean;
  tools: string[];
  /** The shell tool to call and how its arguments look, or undefined when none is offered. */
  shell: ShellTool | undefined;
  /** The conversation already holds a tool result. */
  hasToolResult: boolean;
  /** The answer must be JSON of this schema (Gemini's JSON mode). */
  jsonSchema?: unknown;
}

export interface ShellTool {
  name: string;
  args(command: string): Record<string, unknown>;
}

export interface Reply {
  kind: 'tool-call' | 'text' | 'stream-error';
  model: string;
  text?: string;
  tool?: { name: string; args: Record<string, unknown> };
  usage: { input: number; output: number };
}

/** One wire format: which requests it owns, how to read them, how to answer. */
export interface Wire {
  name: string;
  matches(method: string, path: string): boolean;
  read(path: string, body: Record<string, unknown>): Turn;
  /** Writes the reply (streamed or whole), broken after the first event when `cut` says how. */
  answer(res: ServerResponse, turn: Turn, reply: Reply, cut: Cut): void;
  /** The provider's error body for an HTTP error. */
  errorBody(status: number, message: string): unknown;
}

const WIRES: Wire[] = [anthropic, responses, gemini, chat];

export const USAGE = { input: 120, output: 30 };

export interface MockModel {
  url: string;
  requests: RecordedRequest[];
  /** Sets the script for the next agent run and forgets earlier requests. */
  reset(scenario: Scenario): void;
  close(): Promise<void>;
}

export async function startMockModel(): Promise<MockModel> {
  let scenario: Scenario = { command: 'true' };
  let requests: RecordedRequest[] = [];
  let faulted = false;

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const path = req.url ?? '/';
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const wire = WIRES.find((w) => w.matches(req.method ?? 'GET', path));
    if (!wire) {
      requests.push({ method: req.method ?? '', path, model: undefined, main: false, answered: 'not-found', tools: [] });
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
      return;
    }
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
    } catch {
      // A body that is not JSON is answered like an empty one: the agent's request is what is tested.
    }
    const turn = wire.read(path, body);
    const main = turn.shell !== undefined;
    const record = (answered: RecordedRequest['answered']) =>
      requests.push({ method: req.method ?? '', path, model: turn.model, main, answered, tools: turn.tools });
    const error = (status: number) => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(wire.errorBody(status, FAULT_MESSAGE)));
    };

    if (scenario.fault === 'http400') {
      record('http400');
      return error(400);
    }
    if (main && scenario.fault === 'http500-once' && !faulted) {
      faulted = true;
      record('http500');
      return error(500);
    }
    const model = turn.model ?? 'mock-model';
    let reply: Reply;
    if (main && scenario.fault === 'in-stream-error') {
      reply = { kind: 'stream-error', model, text: FAULT_MESSAGE, usage: USAGE };
    } else if (turn.shell && !turn.hasToolResult) {
      reply = { kind: 'tool-call', model, tool: { name: turn.shell.name, args: turn.shell.args(scenario.command) }, usage: USAGE };
    } else {
      reply = { kind: 'text', model, text: turn.hasToolResult ? 'Committed the change.' : 'Mock title', usage: USAGE };
    }
    const breaks = main && !faulted && (scenario.fault === 'cut-once' || scenario.fault === 'truncate-once');
    const cut: Cut = breaks ? (scenario.fault === 'cut-once' ? 'destroy' : 'end') : false;
    if (breaks) faulted = true;
    record(cut === 'destroy' ? 'cut' : cut === 'end' ? 'truncated' : reply.kind);
    wire.answer(res, turn, reply, cut);
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(error));
      else res.destroy();
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get requests() {
      return requests;
    },
    reset(next) {
      scenario = next;
      requests = [];
      faulted = false;
    },
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

/** How a stream breaks: the connection drops (`destroy`) or the body ends early (`end`). */
export type Cut = false | 'destroy' | 'end';

/** Server-sent events, one `event:`/`data:` pair each, broken after the first when `cut` says so. */
export function sse(res: ServerResponse, events: { event?: string; data: unknown }[], cut: Cut): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  for (const [i, e] of events.entries()) {
    const data = typeof e.data === 'string' ? e.data : JSON.stringify(e.data);
    res.write(`${e.event ? `event: ${e.event}\n` : ''}data: ${data}\n\n`);
    if (cut && i === 0) {
      // Let the first event reach the agent, then break the answer off.
      setTimeout(() => (cut === 'destroy' ? res.destroy() : res.end()), 50);
      return;
    }
  }
  res.end();
}

/** The shell tool among the offered ones, with arguments shaped by its JSON schema. */
export function pickShell(tools: { name: string; schema: unknown }[], names: readonly string[]): ShellTool | undefined {
  for (const wanted of names) {
    const tool = tools.find((t) => t.name === wanted);
    if (!tool) continue;
    const props = (tool.schema as { properties?: Record<string, { type?: string }> } | undefined)?.properties ?? {};
    const key = 'command' in props ? 'command' : 'cmd' in props ? 'cmd' : 'command';
    const asArray = props[key]?.type === 'array';
    return {
      name: tool.name,
      args: (command) => ({
        [key]: asArray ? ['bash', '-lc', command] : command,
        ...('description' in props ? { description: 'Commit the change' } : {}),
      }),
    };
  }
  return undefined;
}
