// Builds the API client for a command from the resolved settings. `--verbose` shows each request's
// id, status and timing: never a header, so never the token.
import { createApiClient, type ApiClient } from '../api/client.js';
import type { Context } from './context.js';
import { resolveBaseUrl, resolveConnection, resolveMaxWaitMs } from './settings.js';

export interface ConnectOptions {
  /** A token other than the configured one (auth login checks the new token). */
  token?: string;
  /**
   * A dispatch run must still flush its events and close `interrupted` after the first Ctrl-C, so
   * its client is not bound to the interrupt signal (the engine stops its own work); plain
   * commands are, so Ctrl-C ends a slow request or a rate-limit wait at once.
   */
  interruptible?: boolean;
  /** Where the "retrying (n)…" line goes (a dispatch hands it to its progress view, over the spinner). */
  notice?: (line: string) => void;
}

export function connect(ctx: Context, opts: ConnectOptions = {}): ApiClient {
  const conn = opts.token
    ? { baseUrl: resolveBaseUrl(ctx), token: opts.token, insecure: Boolean(ctx.globals.insecure), maxWaitMs: resolveMaxWaitMs(ctx) }
    : resolveConnection(ctx);
  return createApiClient({
    ...conn,
    version: ctx.version,
    ...(opts.interruptible === false ? {} : { signal: ctx.interrupts.signal }),
    onRequest: (info) => {
      ctx.out.verbose(
        `${info.method} ${info.path} → ${info.status || info.fault} in ${Math.round(info.ms)} ms (request ${info.requestId}${info.attempt > 1 ? `, attempt ${info.attempt}` : ''}${info.retryInMs !== null ? `, retry in ${info.retryInMs} ms` : ''})`,
      );
      // A person at a terminal sees that svc is waiting, not hung (up to --max-wait); pipes, CI and
      // --json stay quiet, and --verbose already said it.
      if (info.retryInMs !== null && ctx.out.interactive && !ctx.out.verboseOn) {
        const line = `${info.status ? `HTTP ${info.status}` : `service ${info.fault === 'refused' ? 'unreachable' : (info.fault ?? 'fault')}`} — retrying (${info.attempt})…`;
        if (opts.notice) opts.notice(line);
        else ctx.out.info(ctx.out.style.dim(line));
      }
    },
  });
}
