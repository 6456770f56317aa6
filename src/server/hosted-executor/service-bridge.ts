// The service, as a runner on a network of its own reaches it (docs/hosted.md, "Networking"): a
// unix socket per runner, in a 0700 folder of the service that the engine mounts into the container
// at SERVICE_BRIDGE_DIR. Each connection to it is piped to the service's loopback address. Inside,
// the runner's own svc (root) listens on that same address in the container's loopback and pipes
// to the socket (src/dispatch/hosted/service-forward.ts), so SVC_BASE_URL and the git-credential
// operation's clone URLs are the same on both sides and the service keeps listening on the host's
// loopback only. A unix socket passes no firewall: the folder is root's alone, so no agent of the
// runner can open it.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Where the folder holding the socket is mounted in a runner. */
export const SERVICE_BRIDGE_DIR = '/run/svc-service';
export const SERVICE_SOCKET_NAME = 'service.sock';
/** The variable that names the socket to the runner's svc. */
export const SERVICE_SOCKET_ENV = 'SVC_SERVICE_SOCKET';
/** The kernel's limit on a socket's path (sun_path), less its terminating NUL. */
const SOCKET_PATH_MAX = 107;

export interface ServiceBridge {
  /** The folder to mount (the socket is SERVICE_SOCKET_NAME in it). */
  dir: string;
  close(): Promise<void>;
}

/** The host and port of a loopback http URL, or null when the URL names another host (reached over the runner's network). */
export function loopbackTarget(url: string): { host: string; port: number } | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return null;
  }
  const host = u.hostname.replace(/^\[|\]$/g, '');
  const loopback = host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
  if (!loopback || (u.protocol !== 'http:' && u.protocol !== 'https:')) return null;
  return { host: host === 'localhost' ? '127.0.0.1' : host, port: Number(u.port || (u.protocol === 'https:' ? 443 : 80)) };
}

/**
 * Listens on a fresh socket for one runner, piping to `target`: in `<near>/<name>.service/` when
 * that path fits a socket, else in a 0700 folder of the temp folder. close() removes it.
 */
export async function startServiceBridge(target: { host: string; port: number }, near: string, name: string): Promise<ServiceBridge> {
  const beside = join(near, `${name}.service`);
  let dir: string;
  if (join(beside, SERVICE_SOCKET_NAME).length <= SOCKET_PATH_MAX) {
    rmSync(beside, { recursive: true, force: true });
    mkdirSync(beside, { mode: 0o700 });
    dir = beside;
  } else {
    dir = mkdtempSync(join(tmpdir(), 'svc-service-'));
  }
  const open = new Set<Socket>();
  const server: Server = createServer((inside) => {
    const service = createConnection(target);
    for (const s of [inside, service]) {
      open.add(s);
      s.once('close', () => open.delete(s));
      // A side that fails or ends takes the other with it; nothing of it is the runner's to hear.
      s.on('error', () => (inside.destroy(), service.destroy()));
    }
    inside.pipe(service).pipe(inside);
  });
  try {
    await new Promise<void>((done, fail) => server.once('error', fail).listen(join(dir, SERVICE_SOCKET_NAME), done));
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  let closed: Promise<void> | null = null;
  return {
    dir,
    close: () =>
      (closed ??= new Promise<void>((done) => {
        server.close(() => done());
        for (const s of open) s.destroy();
      }).finally(() => rmSync(dir, { recursive: true, force: true }))),
  };
}
