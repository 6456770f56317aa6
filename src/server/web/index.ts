// The read-only pages of `svc server` at `/`: a login form that takes a token (kept server-side,
// the browser holding only an HttpOnly, SameSite=Strict session cookie), the workspace's runs
// newest first, and a run's page whose legs and timeline update while it runs. Nothing here writes
// to the store, and /api/v1 is untouched: these are raw routes beside it, like the git remote.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { DatabaseSync } from 'node:sqlite';
import { authenticate } from '../auth.js';
import type { Principal, RawHandler, ServiceModule } from '../kernel.js';
import { listRuns, runView } from './data.js';
import { LIVE_JS, loginPage, notFoundPage, runFragment, runPage, runsFragment, runsPage } from './pages.js';
import { clearedCookie, SessionStore, sessionCookie, sessionIdOf } from './sessions.js';

const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};
const MAX_FORM_BYTES = 8 * 1024;

type Deps = { db: DatabaseSync; now(): Date };

function send(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}, type = 'text/html; charset=utf-8'): void {
  res.writeHead(status, { ...SECURITY_HEADERS, 'content-type': type, 'content-length': String(Buffer.byteLength(body)), ...headers });
  res.end(body);
}

function redirect(res: ServerResponse, to: string, headers: Record<string, string> = {}): void {
  res.writeHead(303, { ...SECURITY_HEADERS, location: to, 'content-length': '0', ...headers });
  res.end();
}

/** The form body, or null when it is too large or the client went away. */
function readForm(req: IncomingMessage): Promise<URLSearchParams | null> {
  return new Promise((done) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= MAX_FORM_BYTES) chunks.push(c);
    });
    req.on('end', () => done(size > MAX_FORM_BYTES ? null : new URLSearchParams(Buffer.concat(chunks).toString('utf8'))));
    req.on('error', () => done(null));
  });
}

/** A personal token allowed to browse: the pages show what `project:browse` reads, nothing more. */
function viewer(db: DatabaseSync, token: string | null, now: Date): Principal | null {
  if (!token) return null;
  const p = authenticate(db, `Bearer ${token}`, now);
  return p && p.kind === 'pat' && p.scopes.includes('project:browse') ? p : null;
}

/**
 * A form posted from another site (login CSRF) is refused. Sec-Fetch-Site says so where the browser
 * sends it; else a real Origin must name this host (`null`, which no-referrer pages send for their
 * own forms, proves nothing either way).
 */
function sameOrigin(req: IncomingMessage): boolean {
  const site = req.headers['sec-fetch-site'];
  if (typeof site === 'string') return site === 'same-origin' || site === 'none';
  const origin = req.headers.origin;
  if (!origin || origin === 'null') return true;
  try {
    return new URL(origin).host === req.headers.host;
  } catch {
    return false;
  }
}

export interface WebOptions {
  /** How often a live page refreshes itself (default 1 s). */
  intervalMs?: number;
}

export function createWebModule(opts: WebOptions = {}): ServiceModule {
  const sessions = new SessionStore();
  const interval = opts.intervalMs ?? 1000;

  async function handle(req: IncomingMessage, res: ServerResponse, deps: Deps): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://local');
    const method = (req.method ?? 'GET').toUpperCase();
    const now = deps.now();
    const sid = sessionIdOf(req.headers.cookie);
    const principal = viewer(deps.db, sessions.token(sid, now.getTime()), now);
    const fragment = url.searchParams.get('fragment') === '1';

    if (method === 'POST' && !sameOrigin(req)) return send(res, 403, notFoundPage(false).replace('Not found', 'Cross-site request refused'));
    if (url.pathname === '/web/live.js' && method === 'GET') return send(res, 200, LIVE_JS, {}, 'text/javascript; charset=utf-8');
    if (url.pathname === '/login' && method === 'POST') {
      const form = await readForm(req);
      const token = form?.get('token')?.trim() ?? '';
      if (!viewer(deps.db, token, now)) return send(res, 401, loginPage('That token is not valid here, or lacks the project:browse scope.'));
      sessions.drop(sid);
      return redirect(res, '/', { 'set-cookie': sessionCookie(sessions.create(token, now.getTime()), false) });
    }
    if (url.pathname === '/logout' && method === 'POST') {
      sessions.drop(sid);
      return redirect(res, '/', { 'set-cookie': clearedCookie() });
    }
    if (method !== 'GET' && method !== 'HEAD') return send(res, 404, notFoundPage(Boolean(principal)));
    if (!principal) {
      if (fragment) return send(res, 401, '', {}, 'text/plain; charset=utf-8');
      // A session the token no longer backs (revoked, expired, server restarted) is cleared.
      const extra: Record<string, string> = sid ? { 'set-cookie': clearedCookie() } : {};
      if (url.pathname === '/' || url.pathname === '/login') return send(res, 200, loginPage(null), extra);
      return redirect(res, '/', extra);
    }
    if (url.pathname === '/' || url.pathname === '/login') {
      const rows = listRuns(deps.db, principal);
      return send(res, 200, fragment ? runsFragment(rows, now.getTime(), interval) : runsPage(rows, now.getTime(), interval));
    }
    const m = /^\/runs\/([^/]+)$/.exec(url.pathname);
    if (m) {
      let id: string;
      try {
        id = decodeURIComponent(m[1]!);
      } catch {
        return send(res, 404, notFoundPage(true));
      }
      const view = runView(deps.db, principal, id);
      if (!view) return send(res, 404, notFoundPage(true));
      return send(res, 200, fragment ? runFragment(view, now.getTime(), interval) : runPage(view, now.getTime(), interval));
    }
    return send(res, 404, notFoundPage(true));
  }

  const raw = (prefix: string, exact = false): RawHandler => ({
    prefix,
    ...(exact ? { exact } : {}),
    handle: (req, res, deps) => handle(req, res, deps),
  });
  return { name: 'web', schema: '', routes: [], raw: [raw('/', true), raw('/login'), raw('/logout'), raw('/runs/'), raw('/web/')] };
}
