// `svc api METHOD PATH`: any operation of the contract, through the same core as every command
// (auth, request id, retries). The path is matched against the operation table, so what is not in
// the contract is refused instead of guessed.
import { readFileSync } from 'node:fs';
import { text } from 'node:stream/consumers';
import { paginate } from '../../api/paginate.js';
import { createTransport } from '../../api/request.js';
import { OPERATIONS, type Operation } from '../../contract/operations.js';
import type { Page } from '../../contract/types.js';
import type { Context } from '../context.js';
import { UsageError } from '../exit-codes.js';
import { resolveConnection } from '../settings.js';
import type { ApiFlags } from './flags.js';

function matchOperation(method: string, path: string): { op: Operation; params: Record<string, string>; query: URLSearchParams } {
  const url = new URL(path.replace(/^\/?(api\/v1)?\/?/, '/'), 'http://x');
  const parts = url.pathname.split('/').filter(Boolean);
  for (const op of OPERATIONS as readonly Operation[]) {
    if (op.method !== method.toUpperCase()) continue;
    const tpl = op.path.split('/').filter(Boolean);
    if (tpl.length !== parts.length) continue;
    const params: Record<string, string> = {};
    if (tpl.every((t, i) => (t.startsWith('{') ? ((params[t.slice(1, -1)] = decodeURIComponent(parts[i]!)), true) : t === parts[i]))) {
      return { op, params, query: url.searchParams };
    }
  }
  throw new UsageError(`${method.toUpperCase()} ${url.pathname} is not an operation of the contract (see \`svc api --help\`)`);
}

function parseFields(fields: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of fields) {
    const eq = f.indexOf('=');
    if (eq < 1) throw new UsageError(`-f takes key=value, got '${f}'`);
    const raw = f.slice(eq + 1);
    let value: unknown = raw;
    // Like gh: numbers, booleans and null are typed; everything else is a string.
    if (/^-?\d+(\.\d+)?$/.test(raw)) value = Number(raw);
    else if (raw === 'true' || raw === 'false') value = raw === 'true';
    else if (raw === 'null') value = null;
    out[f.slice(0, eq)] = value;
  }
  return out;
}

/** The flags of `svc api` (and the method and path), as its table in register.ts declares them. */
export type ApiOptions = ApiFlags & { method: string; path: string };

export async function runApi(opts: ApiOptions, ctx: Context): Promise<void> {
  const { op, params, query } = matchOperation(opts.method, opts.path);
  const fields = parseFields(opts.field ?? []);
  const q: Record<string, string | string[]> = {};
  for (const k of new Set(query.keys())) q[k] = query.getAll(k).length > 1 ? query.getAll(k) : query.get(k)!;
  let body: unknown;
  if (opts.input) {
    const raw = opts.input === '-' ? await text(ctx.stdin) : readFileSync(opts.input, 'utf8');
    try {
      body = JSON.parse(raw);
    } catch {
      throw new UsageError(`--input ${opts.input} is not JSON`);
    }
  } else if (op.method === 'GET') {
    for (const [k, v] of Object.entries(fields)) q[k] = String(v);
  } else if (Object.keys(fields).length) {
    body = fields;
  }
  const transport = createTransport({
    ...resolveConnection(ctx),
    version: ctx.version,
    signal: ctx.interrupts.signal,
    // The same --verbose line as every other command (connect.ts): request id and timing, no header.
    onRequest: (info) =>
      ctx.out.verbose(
        `${info.method} ${info.path} → ${info.status || info.fault} in ${Math.round(info.ms)} ms (request ${info.requestId}${info.attempt > 1 ? `, attempt ${info.attempt}` : ''}${info.retryInMs !== null ? `, retry in ${info.retryInMs} ms` : ''})`,
      ),
  });
  const call = (cursor?: string) =>
    transport.call<Page<unknown>>({
      operationId: op.id as never,
      params,
      query: { ...q, ...(cursor ? { cursor } : {}) },
      ...(body !== undefined ? { body } : {}),
    });
  try {
    if (opts.paginate) {
      const rows: unknown[] = [];
      for await (const row of paginate(async (cursor) => (await call(cursor)).body)) rows.push(row);
      return ctx.out.document(rows);
    }
    const reply = await call();
    if (reply.body !== undefined && reply.body !== null && (reply.body as unknown) !== '') ctx.out.document(reply.body);
  } finally {
    await transport.close();
  }
}
