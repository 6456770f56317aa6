// Typed failures of the client. Every way a call can fail ends as one of two classes:
// `ClientConfigError` (refused before any request: bad token, bad or insecure base URL) and
// `ApiError` (the request was attempted: an HTTP error status, a transport fault, or an answer the
// client cannot read). The CLI maps both to exit codes in one place: `exitCodeFor` below.
import { BEARER_VALUE, TOKEN_PREFIXES, TOKEN_SHAPES, tokenShapePattern } from './token-shapes.js';

/**
 * What went wrong on the wire when the service gave no usable HTTP answer.
 * - `refused`: nothing listened (ECONNREFUSED, a DNS failure, an unreachable host); never reached the service.
 * - `reset`: the connection broke after the request was sent (ECONNRESET, socket hang up).
 * - `timeout`: no complete answer within the per-request timeout.
 * - `truncated`: the answer's status arrived but its body was cut short.
 * - `bad_body`: the body arrived whole but is not the JSON the operation answers.
 */
export type WireFault = 'refused' | 'reset' | 'timeout' | 'truncated' | 'bad_body';

export interface ApiErrorInit {
  status: number;
  code: string | null;
  message: string;
  requestId: string;
  operationId: string;
  method: string;
  path: string;
  ambiguous: boolean;
  fault?: WireFault | null;
  attempts?: number;
  rateLimitReset?: number | null;
  body?: unknown;
  cause?: unknown;
}

/** A request that was attempted and failed. Never carries the token, in any field. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  /** HTTP status; 0 when no HTTP answer arrived (see `fault`). */
  readonly status: number;
  /** The contract's machine `code` from the error body; null for 500s, non-JSON bodies and faults. */
  readonly code: string | null;
  /** The request id the service echoed (or ours, when no answer arrived): quote it in bug reports. */
  readonly requestId: string;
  readonly operationId: string;
  readonly method: string;
  /** The path below the base URL, e.g. `/api/v1/work-items/ABC-1` (no query string). */
  readonly path: string;
  /**
   * True when the service may have applied the request although the client saw a failure
   * (connection reset or timeout after sending, 500/502/504, a 2xx whose body was lost). A caller of
   * a non-idempotent operation resolves it by reading state (the event append reads the run's
   * `seq`). False when the request provably did not take effect: connection refused, 503
   * (the service refused to work), 429, and every 4xx.
   */
  readonly ambiguous: boolean;
  /** Set when the failure is on the wire rather than an HTTP error status. */
  readonly fault: WireFault | null;
  /** How many attempts were made, retries included. */
  readonly attempts: number;
  /** For a 429: the `X-RateLimit-Reset` epoch seconds, when sent. */
  readonly rateLimitReset: number | null;
  /** The parsed error body when it was JSON (for `--json` error output); undefined otherwise. */
  readonly body: unknown;

  constructor(init: ApiErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.status = init.status;
    this.code = init.code;
    this.requestId = init.requestId;
    this.operationId = init.operationId;
    this.method = init.method;
    this.path = init.path;
    this.ambiguous = init.ambiguous;
    this.fault = init.fault ?? null;
    this.attempts = init.attempts ?? 1;
    this.rateLimitReset = init.rateLimitReset ?? null;
    this.body = init.body;
  }
}

/** Why the client refused to send anything (`argument`: an empty path parameter such as a key). */
export type ConfigProblem = 'token' | 'base_url' | 'insecure' | 'argument';

/** Refused before any request: a token without the expected prefix, or an unusable base URL. */
export class ClientConfigError extends Error {
  override readonly name = 'ClientConfigError';
  constructor(
    readonly problem: ConfigProblem,
    message: string,
  ) {
    super(message);
  }
}

/** Exit codes of README.md#exit-codes, in one table. */
export const EXIT = {
  ok: 0,
  failed: 1,
  usage: 2,
  auth: 3,
  notFound: 4,
  unavailable: 5,
  entitlement: 6,
  sigint: 130,
  sigterm: 143,
} as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** The kinds of failure an error can name: every row of EXIT but success. */
export type FailureKind = Exclude<keyof typeof EXIT, 'ok'>;

/**
 * An error of svc's own. It names its kind of failure, never a number: `exitCodeFor` alone turns
 * a kind into an exit code, through EXIT.
 */
export abstract class SvcError extends Error {
  abstract readonly kind: FailureKind;

  /** For code that reads `exitCode` off whatever was thrown (the CLI's last report, a report writer). */
  get exitCode(): number {
    return exitCodeFor(this);
  }
}

/**
 * The exit code for any error a command lets escape (README.md#exit-codes). Errors of other layers may
 * carry their own numeric `exitCode` (commander's usage errors, for instance) and keep it.
 */
export function exitCodeFor(error: unknown): number {
  if (error instanceof SvcError) return EXIT[error.kind];
  if (error instanceof ClientConfigError) return error.problem === 'token' ? EXIT.auth : EXIT.usage;
  if (error instanceof ApiError) return exitCodeForStatus(error.status, error.fault);
  if (typeof error === 'object' && error !== null && 'exitCode' in error) {
    const code = (error as { exitCode: unknown }).exitCode;
    if (typeof code === 'number' && Number.isInteger(code)) return code;
  }
  return EXIT.failed;
}

function exitCodeForStatus(status: number, fault: WireFault | null): number {
  // No usable answer (or a 2xx we could not read): the service stayed unavailable for us.
  if (status === 0 || (fault !== null && status < 400)) return EXIT.unavailable;
  if (status === 422 || status === 400) return EXIT.usage;
  if (status === 401 || status === 403) return EXIT.auth;
  if (status === 404) return EXIT.notFound;
  if (status === 402) return EXIT.entitlement;
  // A 429 only escapes the core once waiting for the reset would pass max-wait.
  if (status === 429 || status >= 500) return EXIT.unavailable;
  return EXIT.failed;
}

// Token shapes must never reach a message, wherever the text came from (a proxy or a buggy service
// could echo a header back in an error sentence). The shapes are the table the log redaction uses.
const SHAPES = TOKEN_SHAPES.map((shape) => tokenShapePattern(shape));

/** Redacts every string inside a parsed JSON value (an error body may quote a header back). */
export function redactDeep(value: unknown): unknown {
  if (typeof value === 'string') return redactTokens(value);
  if (Array.isArray(value)) return value.map(redactDeep);
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactDeep(v)]));
  }
  return value;
}

/** Replaces every well-known token shape in `text` with `[REDACTED]`. */
export function redactTokens(text: string): string {
  if (!TOKEN_PREFIXES.test(text) && !/bearer/i.test(text)) return text;
  let out = text;
  for (const shape of SHAPES) out = out.replace(shape, '[REDACTED]');
  return out.replace(BEARER_VALUE, '$1[REDACTED]');
}
