// GitHub's REST API through @octokit/request, with GitHub's own rate-limit answers honoured: a
// primary limit (`x-ratelimit-remaining: 0`, wait for `x-ratelimit-reset`), `retry-after` (secondary
// limits and 429s), and a secondary limit that names no wait (a minute, as GitHub's docs advise).
// Every wait counts against one budget, `--max-wait`; a wait that would pass it fails at once.
import { request as octokitRequest } from '@octokit/request';
import { Retrier } from '../../api/retry.js';
import { PullRequestError } from './types.js';

export interface GitHubRestOptions {
  /** https://api.github.com, https://HOST/api/v3, or --github-api-url. */
  baseUrl: string;
  /** Asked before every request: an installation token may be re-minted meanwhile. */
  token(): Promise<string>;
  /** Longest total wait for rate limits and unavailable answers (--max-wait). */
  maxWaitMs: number;
  redact(text: string): string;
  /** Tests shorten waits and read the clock. */
  sleep?(ms: number): Promise<void>;
  now?(): number;
  /** Told before each wait, one line. */
  onWait?(line: string): void;
}

export interface GitHubResponse<T> {
  status: number;
  data: T;
}

/** An answer GitHub gave that is not a rate limit: status and GitHub's own message. */
export class GitHubApiError extends PullRequestError {
  constructor(
    readonly status: number,
    message: string,
    readonly errors: string[] = [],
  ) {
    super(message);
  }
}

const SECONDARY_DEFAULT_MS = 60_000;
const UNAVAILABLE_RETRIES = 3;

interface FailedAnswer {
  status: number;
  headers: Record<string, string | number | undefined>;
  message: string;
  errors: string[];
}

/**
 * Octokit reports a request that got no answer at all (refused, reset, a TLS handshake that failed)
 * as a RequestError with status 500 and no response: that is no answer of GitHub's.
 */
function isNoAnswer(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return true;
  const e = error as { status?: unknown; response?: unknown; name?: unknown };
  return typeof e.status !== 'number' || (e.response === undefined && (e.status === 500 || e.name === 'AbortError'));
}

/** The innermost error of a fetch failure that says what went wrong (undici nests it in `cause`). */
function rootCause(error: unknown): { code?: string; reason?: string; message: string } {
  let e: unknown = error;
  for (let depth = 0; depth < 5; depth++) {
    const cause = (e as { cause?: unknown } | null)?.cause;
    if (!(cause instanceof Error)) break;
    e = cause;
  }
  const { code, reason } = (e ?? {}) as { code?: unknown; reason?: unknown };
  return {
    ...(typeof code === 'string' ? { code } : {}),
    ...(typeof reason === 'string' ? { reason } : {}),
    message: (e instanceof Error ? e.message : String(e)).trim(),
  };
}

const CONNECT_CODES: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'no such host',
  EAI_AGAIN: 'the host name could not be resolved now',
  ETIMEDOUT: 'timed out',
  UND_ERR_CONNECT_TIMEOUT: 'timed out connecting',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  UND_ERR_SOCKET: 'the connection closed',
};

/** What a request that got no answer ran into, in a few words: `TLS: wrong version number`, `connection refused`. */
export function describeNetworkFailure(error: unknown): string {
  const { code, reason, message } = rootCause(error);
  // OpenSSL's reason, as Node gives it, or from its line: `…:SSL routines:FUNCTION:wrong version number:FILE:LINE:`.
  if (code?.startsWith('ERR_SSL_') || /SSL routines/.test(message)) {
    return `TLS: ${reason ?? /SSL routines:[^:]*:([^:]+)/.exec(message)?.[1] ?? message}`;
  }
  if (code?.startsWith('ERR_TLS_') || /certificate|CERT_|self.signed/i.test(`${code ?? ''} ${message}`)) return `TLS: ${message}`;
  if (code && CONNECT_CODES[code]) return CONNECT_CODES[code];
  return message;
}

/** Where a request went, without its query (which names a branch, never a token, but is noise). */
function requestUrl(error: unknown, baseUrl: string): string {
  const url = (error as { request?: { url?: unknown } } | null)?.request?.url;
  try {
    const u = new URL(typeof url === 'string' ? url : baseUrl);
    return `${u.origin}${u.pathname}`;
  } catch {
    return baseUrl;
  }
}

function answerOf(error: unknown): FailedAnswer | null {
  if (isNoAnswer(error)) return null;
  const e = error as { status: number; response?: { headers?: Record<string, string>; data?: unknown }; message?: string };
  const data = e.response?.data as { message?: unknown; errors?: unknown } | undefined;
  const errors = Array.isArray(data?.errors)
    ? data.errors.map((x) =>
        typeof x === 'string' ? x : typeof (x as { message?: unknown })?.message === 'string' ? (x as { message: string }).message : JSON.stringify(x),
      )
    : [];
  const message = typeof data?.message === 'string' ? data.message : (e.message ?? `HTTP ${e.status}`);
  return { status: e.status, headers: e.response?.headers ?? {}, message, errors };
}

/** How long GitHub asks us to wait, or null when the answer is no rate limit. */
export function rateLimitWaitMs(a: FailedAnswer, now: number): number | null {
  if (a.status !== 403 && a.status !== 429) return null;
  const retryAfter = Number(a.headers['retry-after']);
  if (a.headers['retry-after'] !== undefined && Number.isFinite(retryAfter)) return Math.max(0, retryAfter * 1000);
  if (String(a.headers['x-ratelimit-remaining']) === '0') {
    const reset = Number(a.headers['x-ratelimit-reset']);
    if (Number.isFinite(reset)) return Math.max(0, reset * 1000 - now) + 1000;
  }
  if (/secondary rate limit/i.test(a.message) || a.status === 429) return SECONDARY_DEFAULT_MS;
  return null;
}

export interface GitHubRest {
  call<T>(route: string, params?: Record<string, unknown>): Promise<GitHubResponse<T>>;
}

export function createGitHubRest(opts: GitHubRestOptions): GitHubRest {
  const now = opts.now ?? Date.now;
  const baseUrl = opts.baseUrl.replace(/\/+$/, '');
  const base = octokitRequest.defaults({
    baseUrl,
    headers: { 'user-agent': 'svc-cli', 'x-github-api-version': '2022-11-28' },
  });
  // One budget for every call of this client (a run's pull requests in one repository): only the
  // waits count, not the time between calls, which an agent's leg may stretch to an hour.
  const retrier = new Retrier({ maxWaitMs: opts.maxWaitMs, countElapsed: false, pacing: { now, ...(opts.sleep ? { sleep: opts.sleep } : {}) } });
  const wait = async (ms: number, why: string): Promise<void> => {
    if (!retrier.budget.allows(ms)) {
      throw new PullRequestError(`GitHub ${why}: waiting ${Math.ceil(ms / 1000)}s would pass --max-wait`);
    }
    opts.onWait?.(`GitHub ${why}: waiting ${Math.ceil(ms / 1000)}s`);
    await retrier.wait(ms);
  };
  return {
    async call<T>(route: string, params: Record<string, unknown> = {}): Promise<GitHubResponse<T>> {
      let unavailable = 0;
      for (;;) {
        const token = await opts.token();
        try {
          const res = await base(route, { ...params, headers: { authorization: `token ${token}` } });
          return { status: res.status, data: res.data as T };
        } catch (error) {
          const a = answerOf(error);
          if (!a) {
            // No answer at all: said as what it is, naming where it went, never as a status of GitHub's.
            throw new PullRequestError(opts.redact(`cannot reach ${requestUrl(error, baseUrl)}: ${describeNetworkFailure(error)}`));
          }
          const limit = rateLimitWaitMs(a, now());
          if (limit !== null) {
            await wait(limit, 'rate limit');
            continue;
          }
          if ((a.status === 502 || a.status === 503 || a.status === 504) && unavailable < UNAVAILABLE_RETRIES) {
            unavailable++;
            await wait(1000 * 2 ** unavailable, `answered ${a.status}`);
            continue;
          }
          const detail = a.errors.length ? ` (${a.errors.join('; ')})` : '';
          throw new GitHubApiError(a.status, opts.redact(`GitHub ${a.status} on ${route}: ${a.message}${detail}`), a.errors);
        }
      }
    },
  };
}
