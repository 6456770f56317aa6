// The one core request function of the client and the wire under it: base URL, auth, request id,
// JSON and the retry policy loop, then one attempt on the wire (send it, read the answer whole, and
// turn whatever happened into a Reply or an ApiError saying whether the service may have applied
// it), so each per-operation function stays one line. What the client is made with is
// client-options.ts; how a fault is named, faults.ts; the keep-alive agents, http-agent.ts.
//
// One HTTP exchange over node:http / node:https with a keep-alive agent, answering the few things
// the client reads of a fetch Response (status, headers, text). Node's `fetch` loads undici on
// its first call: measured side by side (README, Dependencies), one GET through fetch cost a fresh
// process ~100 ms more CPU than through node:http, which every command that talks to the service
// paid before its first answer; node:http is already part of what Node loads for a pipe.
import { randomUUID } from 'node:crypto';
import { API_PREFIX, OPERATIONS, type Operation, type OperationId } from '../contract/operations.js';
import { HEADERS } from '../contract/types.js';
import { type ClientOptions, unreachable, validateClientOptions } from './client-options.js';
import { ApiError, ClientConfigError, redactDeep, type WireFault } from './errors.js';
import { classifyFault, contentType, describeFault, flattenHeaders, isTimeout, parseReset } from './faults.js';
import { agentFor, joinedHeaders, nextTurn, readText } from './http-agent.js';
import { Retrier, type WaitBudget } from './retry.js';
import { DEFAULT_TUNING, decideRetry, type RetryTuning } from './retry-policy.js';

export type { ClientOptions, RequestInfo } from './client-options.js';
export { validateClientOptions } from './client-options.js';

export type QueryValue = string | number | boolean | readonly string[] | null | undefined;

/** What one call of an operation sends. */
export interface CallSpec {
  operationId: OperationId;
  params?: Record<string, string>;
  query?: Record<string, QueryValue>;
  body?: unknown;
  /** A JSON body already encoded as UTF-8, sent as is (instead of `body`). */
  encodedBody?: Uint8Array;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** The wait budget of the loop making this call (the event stream's batch): retries draw on it too. */
  budget?: WaitBudget;
}

export interface Transport {
  /** The normalised base URL (no trailing slash, no `/api/v1`). */
  readonly baseUrl: string;
  call<T>(spec: CallSpec): Promise<Reply<T>>;
  /**
   * Ends the client. Nothing is held to release: the keep-alive agents (http-agent.ts) are shared by
   * every client of the process, and their idle sockets never hold it open.
   */
  close(): Promise<void>;
}

const OPS = new Map<string, Operation>(OPERATIONS.map((op) => [op.id, op]));

/**
 * POSTs that are safe to send twice. The open carries an idempotencyKey (flagged in the contract
 * table); a heartbeat only stamps the time again. Every other write is sent twice only when the
 * failure proves the first attempt did nothing.
 */
const REPEATABLE_WRITES = new Set<string>(['heartbeatDispatchRun']);

export function createTransport(opts: ClientOptions): Transport {
  const url = validateClientOptions(opts);
  const baseUrl = `${url.origin}${url.pathname.replace(/\/+$/, '').replace(/\/api\/v1$/, '')}`;
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const now = opts.now ?? Date.now;
  const pacing = { now, random: opts.random ?? Math.random, ...(opts.sleep ? { sleep: opts.sleep } : {}) };
  const tuning: RetryTuning = {
    ...DEFAULT_TUNING,
    ...opts.retry,
    maxWaitMs: opts.maxWaitMs ?? DEFAULT_TUNING.maxWaitMs,
    random: pacing.random,
  };
  const firstContactMs = opts.firstContactMs ?? 3_000;
  // Set by the first HTTP answer of any call (whatever its status): from then on an outage is one
  // the service may come back from, and --max-wait decides how long to wait for it.
  let answered = false;
  let firstAttemptAt: number | null = null;
  const userAgent = `svc/${opts.version ?? 'dev'}`;
  const authorization = `Bearer ${opts.token}`;

  async function call<T>(spec: CallSpec): Promise<Reply<T>> {
    const { op, path, search, target, init, meta } = requestOf(spec, baseUrl, { 'user-agent': userAgent, authorization });
    const signal = anySignal(opts.signal, spec.signal);
    const repeatable = op.method === 'GET' || ('idempotent' in op && op.idempotent === true) || REPEATABLE_WRITES.has(op.id);
    const startedAt = now();
    // The call's own --max-wait, inside the budget of the loop that made the call, if any.
    const retrier = new Retrier({ maxWaitMs: tuning.maxWaitMs, pacing, ...(spec.budget ? { outer: spec.budget } : {}), ...(signal ? { signal } : {}) });
    let serverErrorRetries = 0;
    for (;;) {
      const attempt = retrier.attempt;
      const t0 = performance.now();
      const outcome = await attemptOnce<T>(target, init, { ...meta, attempts: attempt }, signal, timeoutMs);
      const ms = Math.round(performance.now() - t0);
      if (!(outcome instanceof ApiError) || outcome.status !== 0) answered = true;
      if (!(outcome instanceof ApiError)) {
        opts.onRequest?.({ ...meta, path: path + search, status: outcome.status, requestId: outcome.requestId, attempt, ms, fault: null, retryInMs: null });
        return outcome;
      }
      const { waitedMs, leftMs } = retrier.budget;
      const decision = decideRetry(
        outcome,
        {
          attempt,
          waitedMs,
          serverErrorRetries,
          nowMs: now(),
          repeatable,
          method: op.method,
        },
        { ...tuning, maxWaitMs: waitedMs + leftMs },
      );
      firstAttemptAt ??= startedAt;
      const neverReached = outcome.fault === 'refused' && !answered && (!decision.retry || now() - firstAttemptAt + decision.delayMs > firstContactMs);
      opts.onRequest?.({
        ...meta,
        path: path + search,
        status: outcome.status,
        requestId: outcome.requestId,
        attempt,
        ms,
        fault: outcome.fault,
        retryInMs: decision.retry && !neverReached ? decision.delayMs : null,
      });
      if (neverReached) throw unreachable(outcome, url, baseUrl);
      if (!decision.retry) throw outcome;
      if (outcome.status === 500) serverErrorRetries++;
      if (!(await retrier.wait(decision.delayMs))) throw outcome;
    }
  }

  return {
    baseUrl,
    call,
    async close() {},
  };
}

/** One call's request: its operation, URL, method, headers (a fresh request id) and body. */
function requestOf(spec: CallSpec, baseUrl: string, fixed: { 'user-agent': string; authorization: string }) {
  const op = OPS.get(spec.operationId);
  if (!op) throw new TypeError(`unknown operation ${spec.operationId}`);
  const path = `${API_PREFIX}${fillPath(op, spec.params ?? {})}`;
  const search = encodeQuery(spec.query);
  const requestId = randomUUID();
  const headers: Record<string, string> = {
    accept: 'application/json',
    'user-agent': fixed['user-agent'],
    'x-request-id': requestId,
    ...spec.headers,
    // Last: no header a caller passes replaces the token.
    authorization: fixed.authorization,
  };
  let body: string | Uint8Array | undefined;
  if (spec.encodedBody !== undefined || spec.body !== undefined) {
    body = spec.encodedBody ?? JSON.stringify(spec.body);
    headers['content-type'] = 'application/json';
  }
  const meta = { operationId: op.id as OperationId, method: op.method, path, requestId };
  return { op, path, search, target: `${baseUrl}${path}${search}`, init: { method: op.method, headers, body }, meta };
}

function fillPath(op: Operation, params: Record<string, string>): string {
  return op.path.replace(/\{(\w+)\}/g, (_m, name: string) => {
    const value = params[name];
    if (typeof value !== 'string' || value.length === 0) {
      throw new ClientConfigError('argument', `${op.id}: ${name} must be a non-empty string`);
    }
    return encodeURIComponent(value);
  });
}

/** Arrays become repeated parameters (`kind=bug&kind=task`); null and undefined are left out. */
export function encodeQuery(query: Record<string, QueryValue> | undefined): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue;
    if (Array.isArray(value)) for (const v of value as readonly string[]) params.append(name, v);
    else params.append(name, String(value));
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}

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

export function anySignal(...signals: (AbortSignal | undefined)[]): AbortSignal | undefined {
  const present = signals.filter((s): s is AbortSignal => s !== undefined);
  if (present.length <= 1) return present[0];
  return AbortSignal.any(present);
}
