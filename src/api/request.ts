// The one core request function of the client: base URL, auth, request id, JSON and the retry
// policy loop live here (one attempt on the wire is node-http.ts), so each per-operation function
// stays one line.
import { randomUUID } from 'node:crypto';
import { API_PREFIX, OPERATIONS, type Operation, type OperationId } from '../contract/operations.js';
import { PAT_PREFIX } from '../contract/types.js';
import { anySignal, attemptOnce, type Reply } from './node-http.js';
import { ApiError, ClientConfigError, redactTokens, type WireFault } from './errors.js';
import { Retrier, type WaitBudget } from './retry.js';
import { DEFAULT_TUNING, decideRetry, type RetryTuning } from './retry-policy.js';

export type { Reply } from './node-http.js';

/** One line per attempt, for `--verbose`. Carries no token and no body. */
export interface RequestInfo {
  operationId: OperationId;
  method: string;
  /** Path below the base URL, query string included. */
  path: string;
  /** HTTP status; 0 when no answer arrived. */
  status: number;
  requestId: string;
  /** 1-based; retries of one call share its request id. */
  attempt: number;
  /** Duration of this attempt. */
  ms: number;
  fault: WireFault | null;
  /** Set when the core will try again after this many ms; null when this attempt was final. */
  retryInMs: number | null;
}

export interface ClientOptions {
  /** Service address; paths are `/api/v1/...` below it (a trailing `/api/v1` is tolerated). */
  baseUrl: string;
  token: string;
  /**
   * `pat` (default) expects `svc_pat_`. `run` is a hosted run's credential: any non-empty token the
   * service issued (the contract gives bearer tokens the `svc_pat_` prefix; the local service
   * issues `svc_run_…`), so its shape is not checked beyond being one header-safe word.
   */
  credentialKind?: 'pat' | 'run';
  /** Allow plain `http:` to a host that is not loopback (the token would cross the network in clear). */
  insecure?: boolean;
  /** Client version for `User-Agent: svc/<version>`. */
  version?: string;
  /** Per-attempt timeout, ms (default 30 s). */
  timeoutMs?: number;
  /** Longest total wait of one call across retries, ms (default 5 min; README.md#configuration `--max-wait`). */
  maxWaitMs?: number;
  /**
   * Until the service has answered once, how long refused connections are retried before the call
   * fails "could not reach the service" (default 3 s): a newcomer who forgot `svc server` should
   * not wait out --max-wait in silence. Once any answer came back, `maxWaitMs` governs.
   */
  firstContactMs?: number;
  /** Backoff knobs; tests shrink them. */
  retry?: Partial<Omit<RetryTuning, 'maxWaitMs' | 'random'>>;
  /** Injectable wait (tests pass one that records instead of sleeping). Must reject when `signal` aborts. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Injectable clock, epoch ms (used against `X-RateLimit-Reset` and for the wait budget). */
  now?: () => number;
  /** Injectable jitter source, uniform in [0, 1). */
  random?: () => number;
  onRequest?: (info: RequestInfo) => void;
  /** Aborts every call in flight and every wait (SIGINT); the abort reason is rethrown as is. */
  signal?: AbortSignal;
}

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
   * Ends the client. Nothing is held to release: the keep-alive agents (node-http.ts) are shared by
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

const LOOPBACK = /^(localhost|.+\.localhost|127(?:\.\d{1,3}){3}|\[::1\]|::1)$/i;

/** Checks the token prefix and the base URL; throws ClientConfigError before any request is made. */
export function validateClientOptions(opts: Pick<ClientOptions, 'baseUrl' | 'token' | 'credentialKind' | 'insecure'>): URL {
  const kind = opts.credentialKind ?? 'pat';
  const what = kind === 'run' ? 'run credential (SVC_RUN_TOKEN)' : 'personal access token (SVC_TOKEN)';
  // The message names the expected shape only: the token itself must never reach an error.
  if (typeof opts.token !== 'string' || opts.token.trim().length === 0) {
    throw new ClientConfigError('token', `no ${what} given${typeof opts.token === 'string' && opts.token.length > 0 ? ' (it is blank)' : ''}`);
  }
  if (kind === 'run') {
    if (/[^\x21-\x7e]/.test(opts.token)) {
      throw new ClientConfigError('token', `the ${what} is malformed: it holds whitespace or control characters`);
    }
  } else if (!opts.token.startsWith(PAT_PREFIX) || opts.token.length === PAT_PREFIX.length || /[^\x21-\x7e]/.test(opts.token)) {
    throw new ClientConfigError('token', `the ${what} is malformed: it must start with ${PAT_PREFIX}`);
  }
  let url: URL;
  try {
    url = new URL(opts.baseUrl);
  } catch {
    throw new ClientConfigError('base_url', `base URL is not a valid URL: ${JSON.stringify(redactTokens(String(opts.baseUrl)))}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ClientConfigError('base_url', `base URL must be http(s), not ${url.protocol}`);
  }
  if (url.username || url.password) {
    throw new ClientConfigError('base_url', 'base URL must not carry credentials; use the token');
  }
  if (url.search || url.hash) {
    throw new ClientConfigError('base_url', 'base URL must not carry a query or fragment');
  }
  if (url.protocol === 'http:' && !LOOPBACK.test(url.hostname) && !opts.insecure) {
    throw new ClientConfigError('insecure', `refusing plain http to ${url.hostname}: the token would travel unencrypted (use https, or --insecure)`);
  }
  return url;
}

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

/** The one-line failure of a first contact that never connected (exit 5, like any network fault). */
function unreachable(outcome: ApiError, url: URL, baseUrl: string): ApiError {
  const hint = LOOPBACK.test(url.hostname) ? 'is `svc server` running?' : 'check --base-url / SVC_BASE_URL and the network';
  return new ApiError({
    status: 0,
    code: null,
    fault: 'refused',
    requestId: outcome.requestId,
    operationId: outcome.operationId,
    method: outcome.method,
    path: outcome.path,
    ambiguous: false,
    attempts: outcome.attempts,
    cause: outcome,
    message: `could not reach the service at ${baseUrl} — ${hint}`,
  });
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
