// A real HTTP proxy in front of the local service that breaks chosen requests the way networks and
// gateways do, and records every request it saw, so tests assert on the wire instead of mocking our
// own HTTP. Loopback only; bodies, records and hangs are bounded.
import { createServer, request as httpRequest, Agent, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** What to do to one request. */
export type Fault =
  /** Reset the client connection before forwarding: the service never sees the request. */
  | { kind: 'reset-before' }
  /** Forward, let the service answer, then reset the client connection: applied, answer lost. */
  | { kind: 'reset-after' }
  /** Answer this status without forwarding (a run of 503s, a 502 from a gateway...). */
  | { kind: 'status'; status: number; body?: string; contentType?: string }
  /** A 429 with the section-8 headers; the window resets `resetInMs` from now (rounded up to seconds). */
  | { kind: 'rate-limit'; resetInMs: number }
  /** A 500 whose body is an HTML error page, as a misconfigured gateway sends. */
  | { kind: 'html-500' }
  /** Forward after a delay. */
  | { kind: 'latency'; ms: number }
  /** Forward, then send the real status and headers but only the first `keepBytes` of the body. */
  | { kind: 'truncate'; keepBytes?: number }
  /** Never answer; the connection is dropped after `ms` (bounded, default 60 s) or at close. */
  | { kind: 'hang'; ms?: number };

export type FaultKind = Fault['kind'];

/**
 * One line of the plan. A request matches when `method` and `path` (tested against the path
 * without query) match; a matching request gets the fault when every given trigger agrees:
 * `nth` (1-based occurrence among the requests this rule matched), `times` (the first N
 * occurrences) and `probability` (seeded, so a test replays). The first rule that fires wins.
 */
export interface FaultRule {
  method?: string;
  path?: RegExp;
  nth?: number | number[];
  times?: number;
  probability?: number;
  fault: Fault;
}

/** What the proxy saw. The Authorization header is never recorded, only its scheme. */
export interface SeenRequest {
  /** 1-based order of arrival. */
  n: number;
  /** Arrival time, epoch ms. */
  at: number;
  method: string;
  path: string;
  query: string;
  requestId: string | null;
  /** `bearer` when an `Authorization: Bearer ...` header came, `none` without one. */
  auth: 'bearer' | 'none' | 'other';
  headers: Record<string, string>;
  body: string;
  fault: FaultKind | null;
  /** The status the client was sent; null when the connection was reset or left hanging. */
  status: number | null;
  /** The headers the client was sent (lower-case); empty when nothing was answered. */
  responseHeaders: Record<string, string>;
}

export interface FaultProxy {
  /** Base URL to give the client (`http://127.0.0.1:<port>`). */
  readonly url: string;
  /** Every request in arrival order (the first 10,000). */
  readonly seen: readonly SeenRequest[];
  /** Replaces the plan and restarts its counters. */
  setPlan(rules: FaultRule[]): void;
  /** Forgets what was seen (the plan stays). */
  clearSeen(): void;
  /** The requests matching a method and path. */
  requests(method?: string, path?: RegExp): SeenRequest[];
  close(): Promise<void>;
}

export interface FaultProxyOptions {
  /** The service to forward to; must be loopback. */
  target: string;
  plan?: FaultRule[];
  /** Seed of the PRNG behind `probability` (default 1). */
  seed?: number;
}

const MAX_REQUEST_BYTES = 1 << 20;
const MAX_RESPONSE_BYTES = 16 << 20;
const MAX_RECORDS = 10_000;
const MAX_HANG_MS = 60_000;
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'upgrade', 'proxy-connection']);

/** mulberry32: tiny, fast and seedable, which is all a fault plan needs. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export async function startFaultProxy(opts: FaultProxyOptions): Promise<FaultProxy> {
  const target = new URL(opts.target);
  if (!/^(127\.\d+\.\d+\.\d+|localhost|\[::1\])$/.test(target.hostname)) {
    throw new Error(`fault proxy forwards to loopback only, not ${target.hostname}`);
  }
  const upstream = new Agent({ keepAlive: true, maxSockets: 32 });
  const random = seededRandom(opts.seed ?? 1);
  const seen: SeenRequest[] = [];
  let arrivals = 0;
  let rules: { rule: FaultRule; matched: number; fired: number }[] = [];
  const setPlan = (plan: FaultRule[]) => {
    rules = plan.map((rule) => ({ rule, matched: 0, fired: 0 }));
  };
  setPlan(opts.plan ?? []);
  const hangs = new Set<NodeJS.Timeout>();
  const sockets = new Set<Socket>();

  function pick(method: string, path: string): Fault | null {
    let chosen: Fault | null = null;
    for (const entry of rules) {
      const { rule } = entry;
      if (rule.method && rule.method.toUpperCase() !== method) continue;
      if (rule.path && !rule.path.test(path)) continue;
      entry.matched++;
      if (chosen) continue; // later rules still count their occurrences
      const nth = rule.nth === undefined ? null : Array.isArray(rule.nth) ? rule.nth : [rule.nth];
      if (nth && !nth.includes(entry.matched)) continue;
      if (rule.times !== undefined && entry.fired >= rule.times) continue;
      if (rule.probability !== undefined && !(random() < rule.probability)) continue;
      entry.fired++;
      chosen = rule.fault;
    }
    return chosen;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://proxy.invalid');
    const method = (req.method ?? 'GET').toUpperCase();
    const body = await readBounded(req, MAX_REQUEST_BYTES);
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (name !== 'authorization' && value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
    }
    const authz = req.headers.authorization;
    const record: SeenRequest = {
      n: ++arrivals,
      at: Date.now(),
      method,
      path: url.pathname,
      query: url.search,
      requestId: headers['x-request-id'] ?? null,
      auth: authz === undefined ? 'none' : /^Bearer\s+\S+$/.test(authz) ? 'bearer' : 'other',
      headers,
      body: body?.toString('utf8') ?? '',
      fault: null,
      status: null,
      responseHeaders: {},
    };
    if (seen.length < MAX_RECORDS) seen.push(record);
    if (body === null) return answer(res, record, 413, json({ error: 'request body too large for the fault proxy', code: 'PAYLOAD_TOO_LARGE' }));

    const fault = pick(method, url.pathname);
    record.fault = fault?.kind ?? null;
    const common = sectionEight(record.requestId);
    switch (fault?.kind) {
      case 'reset-before':
        return reset(req);
      case 'status':
        return answer(res, record, fault.status, fault.body ?? json(injectedBody(fault.status)), fault.contentType ?? 'application/json', common);
      case 'rate-limit': {
        const reset = Math.ceil((Date.now() + fault.resetInMs) / 1000);
        return answer(res, record, 429, json({ error: 'rate limit exceeded', code: 'RATE_LIMITED' }), 'application/json', {
          ...common,
          'x-ratelimit-remaining': '0',
          'x-ratelimit-reset': String(reset),
        });
      }
      case 'html-500':
        return answer(res, record, 500, '<!doctype html><html><body><h1>500 Internal Server Error</h1><hr>nginx</body></html>', 'text/html', common);
      case 'hang': {
        const timer = setTimeout(
          () => {
            hangs.delete(timer);
            reset(req);
          },
          Math.min(fault.ms ?? MAX_HANG_MS, MAX_HANG_MS),
        );
        hangs.add(timer);
        return;
      }
      case 'latency':
        await new Promise((r) => setTimeout(r, Math.min(fault.ms, MAX_HANG_MS)));
        break;
      default:
        break;
    }

    const reply = await forward(req, method, url, body).catch(() => null);
    if (!reply) return answer(res, record, 502, json({ error: 'fault proxy: upstream unreachable' }), 'application/json', common);
    if (fault?.kind === 'reset-after') return reset(req);
    if (fault?.kind === 'truncate') {
      const keep = Math.min(fault.keepBytes ?? Math.floor(reply.body.length / 2), Math.max(reply.body.length - 1, 0));
      record.status = reply.status;
      record.responseHeaders = reply.headers;
      // The full length is announced and only part of it sent, then the socket dies: the client
      // sees its status and headers and then a body cut short.
      res.writeHead(reply.status, { ...reply.headers, 'content-length': String(reply.body.length) });
      res.write(reply.body.subarray(0, keep), () => req.socket.destroy());
      return;
    }
    record.status = reply.status;
    record.responseHeaders = reply.headers;
    res.writeHead(reply.status, { ...reply.headers, 'content-length': String(reply.body.length) });
    res.end(reply.body);
  }

  function forward(req: IncomingMessage, method: string, url: URL, body: Buffer): Promise<{ status: number; headers: Record<string, string>; body: Buffer }> {
    return new Promise((resolve, reject) => {
      const headers: Record<string, string | string[]> = {};
      for (const [name, value] of Object.entries(req.headers)) {
        if (value !== undefined && !HOP_BY_HOP.has(name)) headers[name] = value;
      }
      headers.host = target.host;
      if (body.length > 0) headers['content-length'] = String(body.length);
      const up = httpRequest(
        {
          agent: upstream,
          protocol: 'http:',
          hostname: target.hostname.replace(/^\[|\]$/g, ''),
          port: target.port,
          method,
          path: url.pathname + url.search,
          headers,
        },
        (upRes) => {
          readBounded(upRes, MAX_RESPONSE_BYTES).then((buf) => {
            if (buf === null) return reject(new Error('upstream answer too large'));
            const out: Record<string, string> = {};
            for (const [name, value] of Object.entries(upRes.headers)) {
              if (value !== undefined && !HOP_BY_HOP.has(name)) out[name] = Array.isArray(value) ? value.join(', ') : value;
            }
            resolve({ status: upRes.statusCode ?? 502, headers: out, body: buf });
          }, reject);
        },
      );
      up.on('error', reject);
      up.end(body);
    });
  }

  const server = createServer((req, res) => {
    handle(req, res).catch(() => reset(req));
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    setPlan,
    clearSeen: () => {
      seen.length = 0;
    },
    requests: (method?: string, path?: RegExp) => seen.filter((r) => (!method || r.method === method.toUpperCase()) && (!path || path.test(r.path))),
    close: async () => {
      for (const timer of hangs) clearTimeout(timer);
      hangs.clear();
      for (const socket of sockets) socket.destroy();
      upstream.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A TCP reset (RST), not a polite FIN: the client sees ECONNRESET. */
function reset(req: IncomingMessage): void {
  const socket = req.socket;
  if (typeof socket.resetAndDestroy === 'function') socket.resetAndDestroy();
  else socket.destroy();
}

function answer(
  res: ServerResponse,
  record: SeenRequest,
  status: number,
  body: string,
  contentType = 'application/json',
  headers: Record<string, string> = {},
): void {
  const buf = Buffer.from(body, 'utf8');
  const sent = { ...headers, 'content-type': contentType, 'content-length': String(buf.length) };
  record.status = status;
  record.responseHeaders = sent;
  res.writeHead(status, sent);
  res.end(buf);
}

/** The headers api-v1 puts on every response, as the service would send them. */
function sectionEight(requestId: string | null): Record<string, string> {
  return {
    'x-request-id': requestId && /^[A-Za-z0-9._-]{1,128}$/.test(requestId) ? requestId : `proxy-${Date.now()}`,
    'x-svc-api-version': '1.0.0',
    'x-ratelimit-limit': '600',
    'x-ratelimit-remaining': '599',
    'x-ratelimit-reset': String(Math.ceil(Date.now() / 1000) + 60),
  };
}

function injectedBody(status: number): Record<string, string> {
  if (status === 500) return { error: 'injected internal error', requestId: 'proxy' };
  if (status === 503) return { error: 'injected: service unavailable', code: 'UNAVAILABLE' };
  return { error: `injected HTTP ${status}`, code: 'INJECTED' };
}

const json = (value: unknown) => JSON.stringify(value);

/** Reads a whole stream, or null once it passes `max` bytes. */
function readBounded(stream: IncomingMessage, max: number): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) over = true;
      else chunks.push(chunk);
    });
    stream.on('end', () => resolve(over ? null : Buffer.concat(chunks)));
    stream.on('error', reject);
  });
}
