// One attempt of a request on the wire, and nothing else: send it, read the answer whole, and turn
// whatever happened (an answer, an HTTP error, a connection fault, a body cut short or unreadable)
// into a Reply or an ApiError saying whether the service may have applied it. Whether to try again
// is the policy loop's business (request.ts).
//
// One HTTP exchange over node:http / node:https with a keep-alive agent, answering the few things
// the client reads of a fetch Response (status, headers, text). Node's `fetch` loads undici on
// its first call: measured side by side (README, Dependencies), one GET through fetch cost a fresh
// process ~100 ms more CPU than through node:http, which every command that talks to the service
// paid before its first answer; node:http is already part of what Node loads for a pipe.
import { HEADERS } from '../contract/types.js';
import { ApiError, redactDeep, redactTokens, type WireFault } from './errors.js';
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

/**
 * The one place a request leaves the process: sends it, resolves once the status and headers
 * arrived. Redirects are answers here, never followed: a token must not follow a Location elsewhere.
 */
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

/** A successful answer: parsed JSON body (undefined for 204) and lower-cased headers. */
export interface Reply<T> {
  status: number;
  body: T;
  headers: Record<string, string>;
  requestId: string;
}

/** What an attempt's errors carry about the call. */
export interface AttemptMeta {
  operationId: string;
  method: string;
  path: string;
  requestId: string;
  attempts: number;
}

export interface AttemptInit {
  method: string;
  headers: Record<string, string>;
  body: string | Uint8Array | undefined;
}

const REFUSED_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);
const TIMEOUT_CODES = new Set(['ETIMEDOUT']);

/**
 * Makes one attempt. Resolves the reply or the ApiError it ended with; rejects only with the abort
 * reason of `signal`.
 */
export async function attemptOnce<T>(
  target: string,
  init: AttemptInit,
  meta: AttemptMeta,
  signal: AbortSignal | undefined,
  timeoutMs: number,
): Promise<Reply<T> | ApiError> {
  signal?.throwIfAborted();
  // Our own timer covers the whole attempt (connect, headers and body) as one budget.
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(new Error('request timed out')), timeoutMs);
  const combined = anySignal(signal, timeout.signal)!;
  const fail = (status: number, fault: WireFault | null, message: string, extra: Partial<ConstructorParameters<typeof ApiError>[0]> = {}) =>
    new ApiError({ ...meta, status, code: null, fault, message, ambiguous: false, ...extra });
  try {
    let res: WireResponse;
    try {
      res = await send(target, { ...init, signal: combined });
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      const fault = classifyFault(error, timeout.signal.aborted);
      return fail(0, fault, describeFault(fault, meta, timeoutMs, error), {
        // Refused means the service never saw it; a reset or timeout may have come after it acted.
        ambiguous: fault !== 'refused' && init.method !== 'GET',
        cause: error,
      });
    }
    const headers = flattenHeaders(res.headers);
    const requestId = headers[HEADERS.requestId] ?? meta.requestId;
    const status = res.status;
    const rateLimitReset = parseReset(headers[HEADERS.rateReset]);
    // A 2xx, 500, 502 or 504 may mean the write happened; every other status says it did not.
    const mayHaveApplied = init.method !== 'GET' && ((status >= 200 && status < 300) || status === 500 || status === 502 || status === 504);
    let text: string;
    try {
      text = await res.text();
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      const fault: WireFault = timeout.signal.aborted || isTimeout(error) ? 'timeout' : 'truncated';
      return fail(status, fault, `${describeFault(fault, meta, timeoutMs, error)} (HTTP ${status}, body cut short)`, {
        requestId,
        ambiguous: mayHaveApplied,
        rateLimitReset,
        cause: error,
      });
    }
    if (status === 204) {
      return { status, body: undefined as T, headers, requestId };
    }
    let parsed: unknown;
    let json = true;
    try {
      parsed = JSON.parse(text);
    } catch {
      json = false;
    }
    if (status >= 200 && status < 300) {
      // Every operation of the contract answers a JSON object: anything else (a proxy's page, a
      // bare string) is no answer of the service, and must not reach code that reads its fields.
      if (json && typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return { status, body: parsed as T, headers, requestId };
      const what = json ? 'JSON that is not an object' : `a body that is not JSON (${contentType(headers)})`;
      return fail(status, 'bad_body', `${meta.method} ${meta.path} answered HTTP ${status} with ${what}`, {
        requestId,
        ambiguous: mayHaveApplied,
      });
    }
    const errorBody = json && typeof parsed === 'object' && parsed !== null ? (redactDeep(parsed) as Record<string, unknown>) : null;
    const code = typeof errorBody?.code === 'string' ? errorBody.code : null;
    const sentence = typeof errorBody?.error === 'string' && errorBody.error.length > 0 ? errorBody.error : null;
    const message =
      sentence ??
      (json
        ? `${meta.method} ${meta.path} failed with HTTP ${status}`
        : `${meta.method} ${meta.path} failed with HTTP ${status} and a body that is not JSON (${contentType(headers)})`);
    return new ApiError({
      ...meta,
      requestId,
      status,
      code,
      message,
      ambiguous: mayHaveApplied,
      rateLimitReset,
      body: errorBody ?? undefined,
    });
  } finally {
    clearTimeout(timer);
  }
}

/** Lower-cased names; a repeated header's values joined by `, ` (as Headers does). */
function flattenHeaders(raw: Iterable<[string, string]>): Record<string, string> {
  return Object.fromEntries(raw);
}

function parseReset(value: string | undefined): number | null {
  return value !== undefined && /^\d+$/.test(value.trim()) ? Number(value.trim()) : null;
}

function contentType(headers: Record<string, string>): string {
  return headers['content-type']?.split(';')[0]?.trim() || 'no content type';
}

function errorCode(error: unknown): string | undefined {
  const e = error as { code?: unknown; cause?: { code?: unknown }; errors?: { code?: unknown }[] } | null;
  for (const c of [e?.code, e?.cause?.code, e?.errors?.[0]?.code]) if (typeof c === 'string') return c;
  return undefined;
}

function isTimeout(error: unknown): boolean {
  return TIMEOUT_CODES.has(errorCode(error) ?? '');
}

function classifyFault(error: unknown, timedOut: boolean): WireFault {
  if (timedOut || isTimeout(error)) return 'timeout';
  return REFUSED_CODES.has(errorCode(error) ?? '') ? 'refused' : 'reset';
}

function describeFault(fault: WireFault, meta: { method: string; path: string }, timeoutMs: number, error: unknown): string {
  const detail = errorCode(error) ?? (error instanceof Error ? redactTokens(error.message) : 'unknown error');
  switch (fault) {
    case 'refused':
      return `could not reach the service for ${meta.method} ${meta.path} (${detail})`;
    case 'timeout':
      return `${meta.method} ${meta.path} got no complete answer within ${timeoutMs} ms`;
    case 'truncated':
      return `${meta.method} ${meta.path}: the answer was cut off (${detail})`;
    default:
      return `connection lost during ${meta.method} ${meta.path} (${detail})`;
  }
}

export function anySignal(...signals: (AbortSignal | undefined)[]): AbortSignal | undefined {
  const present = signals.filter((s): s is AbortSignal => s !== undefined);
  if (present.length <= 1) return present[0];
  return AbortSignal.any(present);
}
