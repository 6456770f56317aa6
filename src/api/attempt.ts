// One attempt of a request on the wire, and nothing else: send it, read the answer whole, and turn
// whatever happened (an answer, an HTTP error, a connection fault, a body cut short or unreadable)
// into a Reply or an ApiError saying whether the service may have applied it. Whether to try again
// is the policy loop's business (request.ts).
import { HEADERS } from '../contract/types.js';
import { ApiError, redactDeep, redactTokens, type WireFault } from './errors.js';
import { send as sendOverHttp, type WireResponse } from './node-http.js';

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
 * The one place a request leaves the process: node:http with a keep-alive agent, not fetch, which
 * loads undici on its first call, ~100 ms of CPU before the first answer (src/api/node-http.ts,
 * README Dependencies). Redirects are answers here, never followed: a token must not follow a
 * Location elsewhere.
 */
function send(target: string, init: AttemptInit, signal: AbortSignal): Promise<WireResponse> {
  return sendOverHttp(target, { method: init.method, headers: init.headers, body: init.body, signal });
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
      res = await send(target, init, combined);
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
