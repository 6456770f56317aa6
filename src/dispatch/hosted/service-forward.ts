// The runner's half of the service bridge (docs/hosted.md, "Networking"): a runner has a network
// namespace of its own, and a service on the host's loopback is reached through a unix socket the
// executor mounts in, named by SVC_SERVICE_SOCKET. svc listens on SVC_BASE_URL's own loopback
// address in the runner and pipes each connection to that socket, so its API client, git's clones
// and pushes and the git-credential operation's URLs all use the service's one URL. The legs'
// agents are fenced off that port like off any loopback listener (docs/trust.md, "The network of a
// leg"), and the socket's folder is root's alone.
import { statSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';

export const SERVICE_SOCKET_ENV = 'SVC_SERVICE_SOCKET';

export interface ServiceForward {
  /** Where it listens, `host:port`. */
  address: string;
  close(): Promise<void>;
}

function isSocket(path: string): boolean {
  try {
    return statSync(path).isSocket();
  } catch {
    return false;
  }
}

/** The loopback addresses to listen on for `url`'s host, or null when it is not a loopback http URL. */
function loopbackListen(url: string): { hosts: string[]; port: number } | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return null;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
  const host = u.hostname.replace(/^\[|\]$/g, '');
  const port = Number(u.port || (u.protocol === 'https:' ? 443 : 80));
  // `localhost` may be looked up either way: both families answer.
  if (host === 'localhost') return { hosts: ['127.0.0.1', '::1'], port };
  return host === '::1' || /^127(\.\d{1,3}){3}$/.test(host) ? { hosts: [host], port } : null;
}

/**
 * Forwards SVC_BASE_URL's loopback address to SVC_SERVICE_SOCKET, when both are set; null when
 * no socket is named. Throws one line when the URL is not a loopback one or the port is taken.
 */
export async function forwardService(env: Record<string, string | undefined>, baseUrl: string): Promise<ServiceForward | null> {
  const socket = env[SERVICE_SOCKET_ENV];
  if (!socket) return null;
  const at = loopbackListen(baseUrl);
  if (!at) throw new Error(`${SERVICE_SOCKET_ENV} is set but the service's URL ${baseUrl} is not a loopback http URL to forward it on`);
  // Said now, not as a service that resets every request until --max-wait gives up.
  if (!isSocket(socket)) throw new Error(`${SERVICE_SOCKET_ENV}: no socket at ${socket} (the executor mounts the service's there)`);
  const open = new Set<Socket>();
  const onConnection = (inside: Socket) => {
    inside.setNoDelay(true);
    const service = createConnection(socket);
    for (const s of [inside, service]) {
      open.add(s);
      s.once('close', () => open.delete(s));
      s.on('error', () => (inside.destroy(), service.destroy()));
    }
    inside.pipe(service).pipe(inside);
  };
  const servers: Server[] = [];
  const closeAll = () => Promise.all(servers.map((s) => new Promise<void>((done) => s.close(() => done())))).then(() => undefined);
  for (const [i, host] of at.hosts.entries()) {
    const server = createServer(onConnection);
    try {
      await new Promise<void>((done, fail) => server.once('error', fail).listen({ host, port: at.port, exclusive: true }, done));
      servers.push(server);
    } catch (error) {
      // The second family of `localhost` may be missing (no IPv6 in the runner): the first serves.
      if (i > 0) continue;
      await closeAll();
      throw new Error(`cannot forward the service on ${host}:${at.port} (${(error as Error).message})`);
    }
  }
  let closed: Promise<void> | null = null;
  return {
    address: `${at.hosts[0]}:${at.port}`,
    close: () =>
      (closed ??= (() => {
        const done = closeAll();
        for (const s of open) s.destroy();
        return done;
      })()),
  };
}
