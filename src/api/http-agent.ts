// The keep-alive agents shared by every client of the process, and how an answer's headers and body
// are read off node:http. Helpers of the attempt (request.ts): each returns, holding no request.
import type { Agent, IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';

// Idle keep-alive sockets are unref'd by Node's agent: they never hold the process open, and the
// agent closes them before the service's own `Keep-Alive: timeout` would.
const agents = new Map<'http:' | 'https:', Agent>();
export function agentFor(protocol: 'http:' | 'https:'): Agent {
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

export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

export function joinedHeaders(res: IncomingMessage): Map<string, string> {
  const out = new Map<string, string>();
  const raw = res.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    const seen = out.get(name);
    out.set(name, seen === undefined ? raw[i + 1]! : `${seen}, ${raw[i + 1]!}`);
  }
  return out;
}

export function readText(res: IncomingMessage): Promise<string> {
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
