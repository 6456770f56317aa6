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

function answerOf(error: unknown): FailedAnswer | null {
  if (typeof error !== 'object' || error === null || typeof (error as { status?: unknown }).status !== 'number') return null;
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
  const base = octokitRequest.defaults({
    baseUrl: opts.baseUrl.replace(/\/+$/, ''),
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
            // A network fault: no answer at all. Octokit's message names the URL, never the token.
            throw new PullRequestError(opts.redact(`GitHub could not be reached (${route}): ${error instanceof Error ? error.message : String(error)}`));
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
