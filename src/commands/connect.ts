// Builds the API client for a command from the resolved settings. `--verbose` shows each request's
// id, status and timing: never a header, so never the token.
import { createApiClient, type ApiClient } from '../api/client.js';
import type { Context } from './context.js';
import { resolveBaseUrl, resolveConnection, resolveMaxWaitMs } from './settings.js';

export function connect(ctx: Context, token?: string): ApiClient {
  const conn = token ? { baseUrl: resolveBaseUrl(ctx), token, insecure: Boolean(ctx.globals.insecure), maxWaitMs: resolveMaxWaitMs(ctx) } : resolveConnection(ctx);
  return createApiClient({
    ...conn,
    version: ctx.version,
    signal: ctx.interrupts.signal,
    onRequest: (info) =>
      ctx.out.verbose(
        `${info.method} ${info.path} → ${info.status || info.fault} in ${Math.round(info.ms)} ms (request ${info.requestId}${info.attempt > 1 ? `, attempt ${info.attempt}` : ''}${info.retryInMs !== null ? `, retry in ${info.retryInMs} ms` : ''})`,
      ),
  });
}
