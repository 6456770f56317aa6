// What a client is made with, checked before any request is made, and the one-line failure of a
// first contact that never connected: the client's configuration, apart from the request path
// (request.ts) that sends with it.
import { PAT_PREFIX } from '../contract/types.js';
import type { OperationId } from '../contract/operations.js';
import { ApiError, ClientConfigError, redactTokens, type WireFault } from './errors.js';
import type { RetryTuning } from './retry-policy.js';

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

export const LOOPBACK = /^(localhost|.+\.localhost|127(?:\.\d{1,3}){3}|\[::1\]|::1)$/i;

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

/** The one-line failure of a first contact that never connected (exit 5, like any network fault). */
export function unreachable(outcome: ApiError, url: URL, baseUrl: string): ApiError {
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
