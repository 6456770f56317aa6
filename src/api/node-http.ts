// One HTTP exchange over node:http / node:https with a keep-alive agent, answering the few things
// the client reads of a fetch Response (status, headers, text). Node's `fetch` loads undici on
// its first call: measured side by side (README, Dependencies), one GET through fetch cost a fresh
// process ~100 ms more CPU than through node:http, which every command that talks to the service
// paid before its first answer; node:http is already part of what Node loads for a pipe.
import type { Agent, IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';

/** What the client reads of an answer. */
export interface WireResponse {
  status: number;
  /** Lower-cased names; a repeated header's values joined by `, ` (as fetch's Headers does). */
  headers: Iterable<[string, string]>;
  /** The whole body as UTF-8; rejects when the connection ends before the body did. */
  text(): Promise<string>;
}

export interface WireRequest {
  method: string;
  headers: Record<string, string>;
  body: string | Uint8Array | undefined;
  signal: AbortSignal;
}

// Idle keep-alive sockets are unref'd by Node's agent: they never hold the process open, and the
// agent closes them before the service's own `Keep-Alive: timeout` would.
const agents = new Map<'http:' | 'https:', Agent>();
function agentFor(protocol: 'http:' | 'https:'): Agent {
  let agent = agents.get(protocol);
  if (!agent) {
    // https (and so TLS) is loaded only for an https service.
    const mod = process.getBuiltinModule(protocol === 'https:' ? 'node:https' : 'node:http') as typeof import('node:http');
    agent = new mod.Agent({ keepAlive: true });
    // An idle connection the service closed is destroyed as soon as its end is read: the agent
    // skips destroyed sockets (it would otherwise reuse it until its 'close' came).
    const watched = new WeakSet<Socket>();
    agent.on('free', (socket: Socket) => {
      if (watched.has(socket)) return;
      watched.add(socket);
      socket.once('end', () => socket.destroy());
    });
    agents.set(protocol, agent);
  }
  return agent;
}

/** Sends one request; resolves once the status and headers arrived. Redirects are never followed. */
export function send(target: string, init: WireRequest): Promise<WireResponse> {
  const url = new URL(target);
  const protocol = url.protocol === 'https:' ? 'https:' : 'http:';
  const mod = process.getBuiltinModule(protocol === 'https:' ? 'node:https' : 'node:http') as typeof import('node:http');
  const headers: Record<string, string | number> = { ...init.headers };
  if (init.body !== undefined) headers['content-length'] = Buffer.byteLength(init.body);
  // A close the service just sent (it stopped, or ended an idle connection) is read in the poll
  // phase of a later turn of the event loop: after two turns the agent has dropped that socket and
  // connects anew, so the request meets the service as it is now (refused, or a fresh connection)
  // rather than a reset of a stale one. fetch's own asynchronous steps gave it the same grace.
  return nextTurn()
    .then(nextTurn)
    .then(
      () =>
        new Promise((resolve, reject) => {
          init.signal.throwIfAborted();
          const req = mod.request(url, { method: init.method, headers, agent: agentFor(protocol), signal: init.signal }, (res) => {
            resolve({ status: res.statusCode ?? 0, headers: joinedHeaders(res), text: () => readText(res) });
          });
          req.on('error', reject);
          req.end(init.body);
        }),
    );
}

function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

function joinedHeaders(res: IncomingMessage): Map<string, string> {
  const out = new Map<string, string>();
  const raw = res.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    const seen = out.get(name);
    out.set(name, seen === undefined ? raw[i + 1]! : `${seen}, ${raw[i + 1]!}`);
  }
  return out;
}

function readText(res: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    res.on('data', (chunk: Buffer) => parts.push(chunk));
    res.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    res.on('error', reject);
    // A connection that closes before the body is complete: a truncated answer, not an empty one.
    res.on('close', () => {
      if (!res.complete) reject(Object.assign(new Error('the connection closed before the body ended'), { code: 'ECONNRESET' }));
    });
  });
}
