// The words of the one error line, where the service's own are not enough for the user to act on:
// a refused token (401) says which token was refused and what to do, and a 404 names what was
// asked for (`dispatch run not found` alone does not say which run).
import type { Context } from './context.js';

interface Answered {
  status?: unknown;
  path?: unknown;
  message?: unknown;
}

export function errorLine(error: unknown, ctx: Context | undefined): string {
  const e = (error ?? {}) as Answered;
  const message = (typeof e.message === 'string' ? e.message : String(error)).split('\n')[0]!;
  if (typeof e.status !== 'number' || typeof e.path !== 'string') return message;
  if (e.status === 401 && ctx) return `${message}: ${refusedToken(ctx)}`;
  if (e.status === 404) {
    const what = e.path.replace(/^\/api\/v1/, '');
    const id = decodeURIComponent(what.split('/').pop() ?? '');
    return id && !message.includes(id) ? `${message}: ${what}` : message;
  }
  return message;
}

/** Which token the service refused, and what to do about it. */
function refusedToken(ctx: Context): string {
  if (ctx.env.SVC_RUN_ID && ctx.env.SVC_RUN_TOKEN)
    return 'the service refused the run credential in SVC_RUN_TOKEN (the run may have ended, or the credential expired)';
  if (ctx.env.SVC_TOKEN)
    return 'the service refused the token in SVC_TOKEN: set SVC_TOKEN to a valid token, or unset it to use the one `svc auth login` stored';
  return 'the service refused the token `svc auth login` stored: log in again with a valid one (`svc auth login --with-token`)';
}
