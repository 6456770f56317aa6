// The HTTP layer of the local service: one pass per request that does everything the contract
// asks of every operation (request id, version header, auth, rate limit, scope, JSON body, body
// validation, error mapping) so the modules only hold their operation's own rules.
//
// Decisions (docs/service.md): an unknown path or a known path with the wrong method answers 404
// NOT_FOUND (the contract names no 405); requests without a valid token count against a per-address
// bucket of the same size, so their X-RateLimit-* headers are real, not invented. The request body
// is consumed before any answer is written, on every path (./http-body.ts says why); an operation
// the document gives no request body (every GET and DELETE, getGitCredential, heartbeatDispatchRun) ignores whatever body
// comes, and an oversized body is refused with a status the operation documents.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { API_PREFIX, OPENAPI_PATH, OPERATIONS, RUN_CREDENTIAL_OPERATIONS, type OperationId } from '../contract/operations.js';
import { API_VERSION, KEY_PATTERN, REQUEST_ID_PATTERN, type ErrorCode } from '../contract/types.js';
import { authenticate, rateBucket } from './auth.js';
import type { ContractHooks } from './contract-hooks.js';
import type { Database } from './db.js';
import { consumeBody, MAX_BODY_BYTES, type ConsumedBody } from './http-body.js';
import { ServiceError, type CursorCodec, type Principal, type Reply, type Route, type ServiceConfig, type ServiceModule } from './kernel.js';
import type { RateLimiter } from './rate-limit.js';

export { MAX_BODY_BYTES };

export interface ResponseInfo {
  /** Null when no operation matched (unknown path, the OpenAPI document). */
  operationId: OperationId | null;
  status: number;
  body: unknown;
  headers: Record<string, string>;
}

export interface AppDeps {
  db: Database;
  config: ServiceConfig;
  modules: readonly ServiceModule[];
  cursors: CursorCodec;
  limiter: RateLimiter;
  contract: ContractHooks;
  now(): Date;
  onResponse?: (info: ResponseInfo) => void;
  /** Where stacks of unexpected faults go (the server's stderr). */
  logError(line: string): void;
}

interface CompiledRoute {
  operationId: OperationId;
  method: string;
  segments: string[];
  route: Route | undefined;
}

function compile(modules: readonly ServiceModule[]): CompiledRoute[] {
  const byId = new Map<string, Route>();
  for (const m of modules) for (const r of m.routes) byId.set(r.operationId, r);
  return OPERATIONS.map((op) => ({
    operationId: op.id,
    method: op.method,
    segments: op.path.split('/').slice(1),
    route: byId.get(op.id),
  }));
}

/** Path parameters of `route` if `parts` fit its segments; a `{key}` must match the key pattern. */
function paramsOf(route: CompiledRoute, parts: string[]): Record<string, string> | null {
  if (route.segments.length !== parts.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < parts.length; i++) {
    const seg = route.segments[i]!;
    let part: string;
    try {
      part = decodeURIComponent(parts[i]!);
    } catch {
      return null;
    }
    if (!seg.startsWith('{')) {
      if (seg !== part) return null;
      continue;
    }
    const name = seg.slice(1, -1);
    if (part === '' || (name === 'key' && !KEY_PATTERN.test(part))) return null;
    params[name] = part;
  }
  return params;
}

/** The route for method and path (below /api/v1), and whether the path exists under another method. */
function match(routes: CompiledRoute[], method: string, path: string) {
  const parts = path.split('/').slice(1);
  let pathExists = false;
  for (const route of routes) {
    const params = paramsOf(route, parts);
    if (!params) continue;
    if (route.method === method) return { route, params, pathExists: true };
    pathExists = true;
  }
  return { route: null, params: {}, pathExists };
}

const errorBody = (code: ErrorCode, error: string) => ({ error, code });

export function createRequestHandler(deps: AppDeps): (req: IncomingMessage, res: ServerResponse) => void {
  const routes = compile(deps.modules);
  return (req, res) => {
    handle(deps, routes, req, res).catch((err: unknown) => {
      // Only a fault while writing the response lands here; the socket is the best we can do.
      deps.logError(`svc server: failed to answer: ${err instanceof Error ? err.stack : String(err)}`);
      res.destroy();
    });
  };
}

async function handle(deps: AppDeps, routes: CompiledRoute[], req: IncomingMessage, res: ServerResponse): Promise<void> {
  // Paths a module answers itself (the git remote under /git/, the pages at /) bypass the API pipeline entirely.
  const rawPath = (req.url ?? '/').split('?')[0]!;
  const raw = deps.modules.flatMap((m) => m.raw ?? []).find((r) => (r.exact ? rawPath === r.prefix : rawPath.startsWith(r.prefix)));
  if (raw) return raw.handle(req, res, { db: deps.db, config: deps.config, now: deps.now });
  const given = req.headers['x-request-id'];
  const requestId = typeof given === 'string' && REQUEST_ID_PATTERN.test(given) ? given : randomUUID();
  const url = new URL(req.url ?? '/', 'http://local');
  const method = (req.method ?? 'GET').toUpperCase();
  let operationId: OperationId | null = null;
  let rate = { limit: deps.config.rateLimit, remaining: deps.config.rateLimit, resetEpochSeconds: 0 };

  // The body is read once: kept by an operation that takes one, else discarded when answering.
  let consumed: Promise<ConsumedBody> | null = null;
  const send = async (status: number, body: unknown, extra: Record<string, string> = {}): Promise<void> => {
    const read = await (consumed ??= consumeBody(req, 0));
    if (read.gone) {
      // The client went away mid-body: nobody to answer.
      res.destroy();
      return;
    }
    const text = body === undefined ? '' : JSON.stringify(body);
    const headers = responseHeaders(requestId, rate, extra, text, body !== undefined);
    if (!req.complete) headers['connection'] = 'close';
    res.writeHead(status, headers);
    res.end(text);
    if (!req.complete) req.resume();
    try {
      deps.onResponse?.({ operationId, status, body, headers });
    } catch (err) {
      deps.logError(`svc server: response observer failed: ${err instanceof Error ? err.stack : String(err)}`);
    }
  };
  const fail = (status: number, code: ErrorCode, message: string) => send(status, errorBody(code, message));

  try {
    const now = deps.now();
    const principal = authenticate(deps.db, req.headers.authorization, now);
    const bucket = principal ? rateBucket(principal) : `addr:${req.socket.remoteAddress ?? 'unknown'}`;
    const decision = deps.limiter.take(bucket, now.getTime());
    rate = decision;
    if (!decision.allowed) return fail(429, 'RATE_LIMITED', 'rate limit exhausted; retry after X-RateLimit-Reset');

    if (url.pathname === OPENAPI_PATH && method === 'GET') return send(200, deps.contract.openapiDocument);
    if (!principal) return fail(401, 'UNAUTHORIZED', 'authentication required');
    if (!url.pathname.startsWith(`${API_PREFIX}/`)) return fail(404, 'NOT_FOUND', 'no such path');

    const hit = match(routes, method, url.pathname.slice(API_PREFIX.length));
    if (!hit.route) return fail(404, 'NOT_FOUND', hit.pathExists ? `no ${method} operation at this path` : 'no such path');
    const { route: compiled, params } = hit;
    operationId = compiled.operationId;

    const denied = permissionDenied(principal, compiled.operationId);
    if (denied) return fail(403, 'FORBIDDEN', denied);
    if (!compiled.route) return fail(404, 'NOT_FOUND', `operation ${compiled.operationId} is not served by this local service`);

    // Only an operation the document gives a request body parses one; any other ignores it (a body
    // on a GET, DELETE, git-credential or heartbeat is drained by `send`, never refused).
    let body: unknown = undefined;
    if (takesBody(deps, compiled)) {
      const parsed = await parseBody(deps, compiled, () => (consumed ??= consumeBody(req, MAX_BODY_BYTES)));
      if ('gone' in parsed) return void res.destroy();
      if ('refused' in parsed) return fail(...parsed.refused);
      body = parsed.body;
    }

    const reply: Reply = await compiled.route.handle({
      operationId: compiled.operationId,
      params,
      query: url.searchParams,
      body,
      headers: req.headers,
      principal,
      db: deps.db,
      config: deps.config,
      now: deps.now,
      cursors: deps.cursors,
    });
    return await send(reply.status, reply.body, reply.headers);
  } catch (err) {
    if (err instanceof ServiceError) return fail(err.status, err.code, err.message);
    deps.logError(`svc server: internal error (request ${requestId}): ${err instanceof Error ? err.stack : String(err)}`);
    return send(500, { error: 'internal error', requestId });
  }
}

/** Why the principal may not call the operation, or null when it may. */
function permissionDenied(p: Principal, operationId: OperationId): string | null {
  if (p.kind === 'run') {
    return RUN_CREDENTIAL_OPERATIONS.includes(operationId) ? null : 'a run credential may not call this operation';
  }
  const op = OPERATIONS.find((o) => o.id === operationId)!;
  return p.scopes.includes(op.permission) ? null : `token lacks the ${op.permission} permission`;
}

type DocumentedOperation = { requestBody?: unknown; responses?: Record<string, unknown> };

/** The operation's object in the served document. */
function documented(deps: AppDeps, route: CompiledRoute): DocumentedOperation | undefined {
  const paths = deps.contract.openapiDocument.paths as Record<string, Record<string, DocumentedOperation>>;
  return paths['/' + route.segments.join('/')]?.[route.method.toLowerCase()];
}

/** Whether the document gives the operation a request body. */
function takesBody(deps: AppDeps, route: CompiledRoute): boolean {
  return documented(deps, route)?.requestBody !== undefined;
}

/** Whether the document lists `status` among the operation's responses. */
function documents(deps: AppDeps, route: CompiledRoute, status: number): boolean {
  return documented(deps, route)?.responses?.[String(status)] !== undefined;
}

function lowerKeys(h: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) out[k.toLowerCase()] = v;
  return out;
}

/**
 * The dotted path of the first string in `value` holding U+0000, or undefined. SQLite hands text
 * back cut at a NUL, so such a value would not come back as sent (and a `~` filter on it would
 * match everything). An event body is exempt: it is an agent's output, and refusing it would fail
 * the run's whole event stream over one byte.
 */
export function fieldWithNul(value: unknown, path = ''): string | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? path : undefined;
  if (typeof value !== 'object' || value === null) return undefined;
  const entries = Array.isArray(value)
    ? value.map((v, i) => [`${path}[${i}]`, v] as const)
    : Object.entries(value).map(([k, v]) => [path ? `${path}.${k}` : k, v] as const);
  for (const [where, v] of entries) {
    const found = fieldWithNul(v, where);
    if (found !== undefined) return found;
  }
  return undefined;
}

type BodyAnswer = { body: unknown } | { gone: true } | { refused: [status: number, code: ErrorCode, message: string] };

/** The request body of an operation that takes one: parsed and checked against the document, or why not. */
async function parseBody(deps: AppDeps, compiled: CompiledRoute, consume: () => Promise<ConsumedBody>): Promise<BodyAnswer> {
  const read = await consume();
  if (read.gone) return { gone: true };
  if (read.over) {
    // 413 only where the document lists it (the event append); elsewhere a body too large is
    // caller-fixable validation, 422.
    return documents(deps, compiled, 413)
      ? { refused: [413, 'PAYLOAD_TOO_LARGE', `request body exceeds ${MAX_BODY_BYTES} bytes`] }
      : { refused: [422, 'INVALID_REQUEST', `request body too large (over ${MAX_BODY_BYTES} bytes)`] };
  }
  let body: unknown = undefined;
  if (read.bytes.length > 0) {
    try {
      body = JSON.parse(read.bytes.toString('utf8'));
    } catch {
      return { refused: [422, 'INVALID_REQUEST', 'request body is not valid JSON'] };
    }
  }
  const issues = deps.contract.validateRequestBody(compiled.operationId, body);
  if (issues.length > 0) {
    const first = issues[0]!;
    const where = first.path && first.path !== '/' ? `${first.path}: ` : '';
    return { refused: [422, 'INVALID_REQUEST', `${where}${first.message}`.replace(/\s+/g, ' ')] };
  }
  const nul = compiled.operationId === 'appendDispatchEvents' ? undefined : fieldWithNul(body);
  if (nul !== undefined) return { refused: [422, 'INVALID_REQUEST', `${nul ? `${nul}: ` : ''}${nul || 'body'} must not contain a NUL character`] };
  return { body };
}

/** The headers of every answer: the request id, the API version, the rate limit, the body's. */
function responseHeaders(
  requestId: string,
  rate: { limit: number; remaining: number; resetEpochSeconds: number },
  extra: Record<string, string>,
  text: string,
  json: boolean,
): Record<string, string> {
  return {
    'x-request-id': requestId,
    'x-svc-api-version': API_VERSION,
    'x-ratelimit-limit': String(rate.limit),
    'x-ratelimit-remaining': String(rate.remaining),
    'x-ratelimit-reset': String(rate.resetEpochSeconds),
    ...lowerKeys(extra),
    ...(json ? { 'content-type': 'application/json; charset=utf-8' } : {}),
    'content-length': String(Buffer.byteLength(text)),
  };
}
