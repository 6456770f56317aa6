// The smart-HTTP git remote of hosted runs: `/git/<owner>/<name>.git/...` answered by git's own
// `git http-backend` (a CGI program), so clone, fetch and push speak exactly the protocol a real
// source host speaks, protocol v2 and gzip-encoded request bodies included.
//
// Only the installation tokens of getGitCredential get in: HTTP Basic with the token as password,
// checked for THAT repository. Anything else (no header, a PAT, a run credential, an expired or
// revoked token, a token of another run's repositories) is one undifferentiated 401 with
// `WWW-Authenticate: Basic`, which makes git ask its credential helper; with
// GIT_TERMINAL_PROMPT=0 and a helper that fails closed, git then gives up instead of prompting.
// A token in writes only its run's card branches (protected-refs.ts).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { cardKeysOfRun, gitTokenRun } from '../dispatch-runs/index.js';
import type { RawHandler } from '../kernel.js';
import { ensureHooksDir, pushKeysEnv } from './protected-refs.js';
import { parseRepositoryName, repositoryPath, serviceGitEnv } from './repositories.js';

export const GIT_PREFIX = '/git/';

/** The smart protocol's three endpoints; the dumb protocol (raw object files) is not served. */
const SMART = new Map<string, string>([
  ['/info/refs', 'GET'],
  ['/git-upload-pack', 'POST'],
  ['/git-receive-pack', 'POST'],
]);

const ROUTE = /^\/git\/([^/]+)\/([^/]+)\.git(\/.*)$/;

/** The password of a Basic header, or null. The username is not checked (git sends ours back). */
function basicPassword(header: string | undefined): { username: string; password: string } | null {
  const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? '');
  if (!m) return null;
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return null;
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

function plain(req: IncomingMessage, res: ServerResponse, status: number, text: string, headers: Record<string, string> = {}): void {
  const body = `${text}\n`;
  res.writeHead(status, {
    'content-type': 'text/plain; charset=utf-8',
    'content-length': String(Buffer.byteLength(body)),
    // An unread request body (a push refused before its pack was read) must not poison keep-alive.
    ...(req.complete ? {} : { connection: 'close' }),
    ...headers,
  });
  res.end(body);
  req.resume();
}

export const gitHttpBackend: RawHandler = {
  prefix: GIT_PREFIX,
  handle(req, res, { db, config, now }) {
    const url = new URL(req.url ?? '/', 'http://local');
    const m = ROUTE.exec(url.pathname);
    const method = (req.method ?? 'GET').toUpperCase();
    const repository = m ? `${m[1]}/${m[2]}` : '';
    const endpoint = m?.[3] ?? '';
    if (!m || !parseRepositoryName(repository) || SMART.get(endpoint) !== method) {
      return plain(req, res, 404, 'not found');
    }
    const auth = basicPassword(req.headers.authorization);
    const runId = auth ? gitTokenRun(db, auth.password, repository, now()) : null;
    if (!runId) {
      return plain(req, res, 401, 'authentication required', { 'www-authenticate': 'Basic realm="svc git"' });
    }
    if (!config.gitRoot || !existsSync(repositoryPath(config.gitRoot, repository))) {
      return plain(req, res, 404, 'repository not found');
    }
    return serveCgi(req, res, {
      gitRoot: config.gitRoot,
      pathInfo: `/${repository}.git${endpoint}`,
      method,
      query: url.search.slice(1),
      pushKeys: cardKeysOfRun(db, runId),
    });
  },
};

interface CgiRequest {
  gitRoot: string;
  pathInfo: string;
  method: string;
  query: string;
  /** The run's card keys: the `svc/<KEY>` branches this push may update. */
  pushKeys: string[];
}

/** Runs `git http-backend` for one request: the body streams in, the CGI answer streams out. */
function serveCgi(req: IncomingMessage, res: ServerResponse, cgi: CgiRequest): Promise<void> {
  const header = (name: string): string | undefined => {
    const v = req.headers[name];
    return Array.isArray(v) ? v.join(', ') : v;
  };
  const env = serviceGitEnv({
    GIT_PROJECT_ROOT: cgi.gitRoot,
    GIT_HTTP_EXPORT_ALL: '1',
    PATH_INFO: cgi.pathInfo,
    REQUEST_METHOD: cgi.method,
    QUERY_STRING: cgi.query,
    // The bot's name, never the token: http-backend only needs someone to be authenticated.
    REMOTE_USER: 'x-access-token',
    REMOTE_ADDR: req.socket.remoteAddress ?? '',
    ...(header('content-type') ? { CONTENT_TYPE: header('content-type')! } : {}),
    ...(header('content-length') ? { CONTENT_LENGTH: header('content-length')! } : {}),
    ...(header('content-encoding') ? { HTTP_CONTENT_ENCODING: header('content-encoding')! } : {}),
    ...(header('git-protocol') ? { HTTP_GIT_PROTOCOL: header('git-protocol')! } : {}),
    ...pushKeysEnv(cgi.pushKeys),
  });
  // receive-pack is on for authenticated users by default; said explicitly so no config can turn it off.
  // core.hooksPath on the command line: no repository's own config or hooks can replace ours.
  const hooks = ensureHooksDir(cgi.gitRoot);
  const child = spawn('git', ['-c', 'http.receivepack=true', '-c', `core.hooksPath=${hooks}`, 'http-backend'], {
    env,
    stdio: ['pipe', 'pipe', 'ignore'],
  });

  return new Promise<void>((resolve) => {
    let head = Buffer.alloc(0);
    let started = false;
    const finish = () => resolve();

    child.stdin.on('error', () => undefined); // http-backend may exit before reading everything
    req.pipe(child.stdin);
    req.on('error', () => child.kill('SIGKILL'));
    res.on('close', () => {
      if (!res.writableFinished) child.kill('SIGKILL');
    });

    child.stdout.on('data', (chunk: Buffer) => {
      if (started) {
        res.write(chunk);
        return;
      }
      head = Buffer.concat([head, chunk]);
      const parsed = parseCgiHead(head);
      if (!parsed) return;
      started = true;
      res.writeHead(parsed.status, parsed.headers);
      if (parsed.rest.length > 0) res.write(parsed.rest);
    });
    child.on('error', () => {
      if (!res.headersSent) plain(req, res, 500, 'git http-backend could not be started');
      else res.destroy();
      finish();
    });
    child.on('close', (code) => {
      if (!started) {
        if (!res.headersSent) plain(req, res, 500, `git http-backend failed (exit ${code ?? 'signal'})`);
      } else res.end();
      finish();
    });
  });
}

/** Splits a CGI answer into status, headers and the start of the body; null until the head is whole. */
export function parseCgiHead(buf: Buffer): { status: number; headers: Record<string, string>; rest: Buffer } | null {
  const crlf = buf.indexOf('\r\n\r\n');
  const lf = buf.indexOf('\n\n');
  let end: number;
  let sep: number;
  if (crlf >= 0 && (lf < 0 || crlf < lf)) [end, sep] = [crlf, 4];
  else if (lf >= 0) [end, sep] = [lf, 2];
  else return null;
  const headers: Record<string, string> = {};
  let status = 200;
  for (const line of buf.subarray(0, end).toString('latin1').split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (name === 'status') status = Number.parseInt(value, 10) || 500;
    else headers[name] = value;
  }
  return { status, headers, rest: buf.subarray(end + sep) };
}
