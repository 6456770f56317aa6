// How one attempt's failure is named: a connection fault classified (refused, reset, timeout) and
// described in one line with no token in it, and the few header readings of an answer. Called by
// the attempt (request.ts) and returning, holding nothing.
import { redactTokens, type WireFault } from './errors.js';

const REFUSED_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);
const TIMEOUT_CODES = new Set(['ETIMEDOUT']);

/** Lower-cased names; a repeated header's values joined by `, ` (as Headers does). */
export function flattenHeaders(raw: Iterable<[string, string]>): Record<string, string> {
  return Object.fromEntries(raw);
}

export function parseReset(value: string | undefined): number | null {
  return value !== undefined && /^\d+$/.test(value.trim()) ? Number(value.trim()) : null;
}

export function contentType(headers: Record<string, string>): string {
  return headers['content-type']?.split(';')[0]?.trim() || 'no content type';
}

export function errorCode(error: unknown): string | undefined {
  const e = error as { code?: unknown; cause?: { code?: unknown }; errors?: { code?: unknown }[] } | null;
  for (const c of [e?.code, e?.cause?.code, e?.errors?.[0]?.code]) if (typeof c === 'string') return c;
  return undefined;
}

export function isTimeout(error: unknown): boolean {
  return TIMEOUT_CODES.has(errorCode(error) ?? '');
}

export function classifyFault(error: unknown, timedOut: boolean): WireFault {
  if (timedOut || isTimeout(error)) return 'timeout';
  return REFUSED_CODES.has(errorCode(error) ?? '') ? 'refused' : 'reset';
}

export function describeFault(fault: WireFault, meta: { method: string; path: string }, timeoutMs: number, error: unknown): string {
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
