// svc's filtering proxy for one leg (docs/trust.md): an HTTP proxy on a loopback port of the leg's
// own, handling CONNECT and plain (absolute-form) HTTP. It canonicalises the host it is asked for,
// checks it against the leg's allowlist, resolves it itself and connects only to an answer the
// allowlist permits; everything else is a 403 and a refusal. Nothing of a request but its host and
// port is ever logged (never Proxy-Authorization, never a URL's userinfo or path).
import { lookup } from 'node:dns/promises';
import { Agent, createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, isIP, Server, type AddressInfo, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { canonicalHost, splitHostPort, type Allowlist } from './allowlist.js';
import type { Refusal } from './refusal.js';

export interface LegProxy {
  port: number;
  /** Serves connections on a listening socket made elsewhere (a namespace's: fence/bwrap.ts); anything but a server is closed. */
  accept(handle: unknown): void;
  close(): Promise<void>;
}

const UPSTREAM_TIMEOUT_MS = 30_000;
const RELAY_READ_BYTES = 256 << 10;
// Hop-by-hop and proxy headers: never passed on (Proxy-Authorization least of all).
const DROPPED = new Set(['proxy-authorization', 'proxy-connection', 'proxy-authenticate', 'connection', 'keep-alive', 'te', 'trailer', 'upgrade']);

type Target = { ok: true; address: string; port: number } | { ok: false; status: number; refusal: Omit<Refusal, 'count'> };

// A name asked for again within a moment (plain HTTP asks once per request) is not looked up again;
// the answers are still checked against the leg's allowlist every time (resolveTarget).
const LOOKUP_CACHE_MS = 2_000;
const LOOKUP_CACHE_SIZE = 256;
const looked = new Map<string, { at: number; answers: Promise<{ address: string }[]> }>();

function lookupSoon(host: string): Promise<{ address: string }[]> {
  const now = performance.now();
  const hit = looked.get(host);
  if (hit && now - hit.at < LOOKUP_CACHE_MS) return hit.answers;
  if (looked.size >= LOOKUP_CACHE_SIZE) looked.clear();
  const answers = lookup(host, { all: true, verbatim: true });
  looked.set(host, { at: now, answers });
  // A failed lookup is not kept: the next request asks again.
  answers.catch(() => looked.get(host)?.answers === answers && looked.delete(host));
  return answers;
}

/** Where `rawHost:port` may be reached for this leg, or the refusal. */
export async function resolveTarget(allow: Allowlist, rawHost: string, port: number): Promise<Target> {
  const no = (status: number, host: string, how: string): Target => ({ ok: false, status, refusal: { host, port, how } });
  const host = canonicalHost(rawHost);
  if (!host) return no(400, rawHost, 'proxy: not a host name');
  if (!allow.allowsName(host, port)) return no(403, host, 'proxy: not on the allowlist');
  if (isIP(host)) return { ok: true, address: host, port };
  let answers: { address: string }[];
  try {
    answers = await lookupSoon(host);
  } catch {
    return no(502, host, 'proxy: does not resolve');
  }
  const usable = answers.find((a) => allow.allowsAnswer(a.address, port));
  if (!usable) return no(403, host, `proxy: resolves to ${answers[0]?.address ?? 'nothing'}, an inside address off the allowlist`);
  return { ok: true, address: usable.address, port };
}

/**
 * Starts the proxy of one leg on 127.0.0.1 (and, through `accept`, on the listening sockets of the
 * leg's namespaces: bwrap.ts); `onRefused` hears every refusal.
 */
export async function startLegProxy(allow: Allowlist, onRefused: (r: Omit<Refusal, 'count'>) => void): Promise<LegProxy> {
  const agent = new Agent({ keepAlive: true, maxSockets: 64, noDelay: true });
  const open = new Set<Socket | Duplex>();
  const server = createServer((req, res) => void forward(relay, req, res));
  const track = (s: Socket | Duplex) => {
    open.add(s);
    s.once('close', () => open.delete(s));
  };
  server.on('connection', track);

  const deny = (status: number, refusal: Omit<Refusal, 'count'>) => {
    onRefused(refusal);
    return `svc fence: ${status === 400 ? 'not a host name' : `${refusal.host}:${refusal.port} is not reachable from this leg`} (${refusal.how})\n`;
  };

  const relay: Relay = { allow, agent, deny, track };
  server.on('connect', (req: IncomingMessage, client: Duplex, head: Buffer) => void tunnel(relay, req, client, head));

  // A request the HTTP parser cannot read (a NUL in the target, say) is refused and said too.
  server.on('clientError', (error: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Duplex) => {
    const line = error.rawPacket?.toString('latin1').split('\r\n')[0] ?? '';
    const target = /^[A-Z]+ (\S+)/.exec(line)?.[1] ?? '';
    const host = target.replace(/^https?:\/\/(?:[^@/?#]*@)?/i, '').replace(/[/?#].*$/, '');
    onRefused({ host: host.replace(/:\d+$/, '') || '(unreadable request)', port: Number(/:(\d+)$/.exec(host)?.[1]) || null, how: 'proxy: malformed request' });
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain\r\n\r\nsvc fence: malformed request\n');
    else socket.destroy();
  });

  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen({ host: '127.0.0.1', port: 0 }, ok);
  });
  const handed = new Set<Server>();
  let closed = false;
  return {
    port: (server.address() as AddressInfo).port,
    accept: (handle) => {
      if (!(handle instanceof Server)) return void (handle as { destroy?(): void } | null)?.destroy?.();
      // One that comes after the leg's fence came down is closed at once, never served or kept.
      if (closed) return void handle.close();
      handle.on('connection', (c) => server.emit('connection', c));
      handle.on('error', () => undefined);
      handed.add(handle);
    },
    close: () =>
      new Promise<void>((done) => {
        closed = true;
        for (const s of open) s.destroy();
        agent.destroy();
        for (const h of handed) h.close();
        server.close(() => done());
      }),
  };
}

/** What the proxy's two ways of relaying share: the leg's allowlist, the upstream agent, refusals, open sockets. */
interface Relay {
  allow: Allowlist;
  agent: Agent;
  deny(status: number, refusal: Omit<Refusal, 'count'>): string;
  track(s: Socket | Duplex): void;
}

/** A plain-HTTP proxy request: the host checked and resolved, the request passed on, its answer back. */
async function forward(r: Relay, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { allow, agent, deny } = r;
  const m = /^http:\/\/(?:[^@/?#]*@)?([^/?#]*)([^#]*)/i.exec(req.url ?? '');
  const parts = m ? splitHostPort(m[1]!) : null;
  if (!m || !parts) {
    res.writeHead(400, { 'content-type': 'text/plain' }).end('svc fence: a proxy request names an absolute http:// URL (https goes through CONNECT)\n');
    return;
  }
  const port = parts.port ?? 80;
  const t = await resolveTarget(allow, parts.host, port);
  if (!t.ok) {
    res.writeHead(t.status, { 'content-type': 'text/plain' }).end(deny(t.status, t.refusal));
    return;
  }
  const headers: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && !DROPPED.has(k)) headers[k] = v;
  const up = request({ host: t.address, port: t.port, method: req.method, path: m[2] || '/', headers, agent, setHost: false, timeout: UPSTREAM_TIMEOUT_MS });
  up.on('response', (answer) => {
    const back: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(answer.headers)) if (v !== undefined && !DROPPED.has(k)) back[k] = v;
    res.writeHead(answer.statusCode ?? 502, back);
    // An answer cut short upstream is cut short for the client too, never left hanging open.
    answer.once('aborted', () => res.destroy());
    answer.once('error', () => res.destroy());
    answer.pipe(res);
  });
  res.once('close', () => {
    if (!res.writableFinished) up.destroy();
  });
  up.on('timeout', () => up.destroy(new Error('timed out')));
  up.on('error', () => {
    if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' }).end(`svc fence: ${t.address}:${t.port} did not answer\n`);
    else res.destroy();
  });
  req.pipe(up);
}

/** CONNECT: the host checked and resolved, then a byte pipe both ways, nothing inspected. */
async function tunnel(r: Relay, req: IncomingMessage, client: Duplex, head: Buffer): Promise<void> {
  const { allow, deny, track } = r;
  track(client);
  client.on('error', () => undefined);
  const parts = splitHostPort(req.url ?? '');
  if (!parts || parts.port === null) {
    client.end('HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain\r\n\r\nsvc fence: CONNECT takes HOST:PORT\n');
    return;
  }
  const t = await resolveTarget(allow, parts.host, parts.port);
  if (!t.ok) {
    const text = deny(t.status, t.refusal);
    client.end(
      `HTTP/1.1 ${t.status} ${t.status === 400 ? 'Bad Request' : t.status === 403 ? 'Forbidden' : 'Bad Gateway'}\r\ncontent-type: text/plain\r\ncontent-length: ${Buffer.byteLength(text)}\r\n\r\n${text}`,
    );
    return;
  }
  // After the 200 the tunnel is a byte pipe, nothing inspected. It carries request and answer
  // ping-pong (no Nagle delay on either side), and downloads: the server's side is read in reads
  // of up to RELAY_READ_BYTES into the tunnel's one buffer (a stream reads 64 KiB an event), a
  // copy of each handed on, since the buffer is read into again while the client's write waits.
  const buffer = Buffer.allocUnsafe(RELAY_READ_BYTES);
  const up: Socket = connect({
    host: t.address,
    port: t.port,
    timeout: UPSTREAM_TIMEOUT_MS,
    noDelay: true,
    onread: { buffer, callback: (n, b) => client.write(Buffer.from(b.subarray(0, n))) || (client.once('drain', () => up.resume()), false) },
  });
  track(up);
  let piping = false;
  up.once('connect', () => {
    piping = true;
    up.setTimeout(0);
    (client as Socket).setNoDelay?.(true);
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length) up.write(head);
    up.once('end', () => client.end());
    client.pipe(up);
  });
  up.on('timeout', () => up.destroy());
  // Inside a tunnel a reset upstream is a reset for the client; before it, an answer it can read.
  up.on('error', () => (piping ? client.destroy() : client.end('HTTP/1.1 502 Bad Gateway\r\ncontent-type: text/plain\r\n\r\nsvc fence: no answer\n')));
  up.on('close', (hadError) => {
    if (piping && hadError) client.destroy();
  });
  client.on('close', () => up.destroy());
}
