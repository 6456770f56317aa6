// How `svc git-credential` (a child of git, a grandchild of svc) reaches the broker without a token
// in a file, an environment variable or an argv: the svc process that holds the broker listens on
// a unix socket in a fresh 0700 folder inside svc's private state folder (the socket itself 0600),
// and names the socket's path in SVC_GIT_CREDENTIAL_SOCKET of git's environment (never the agent's).
// The path is not a secret; the folders' modes keep other users, agent users included, out. One JSON line in, one JSON line out, one question per connection.
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensurePrivateDir } from '../state/private-dir.js';
import type { CredentialQuery, GitCredentialBroker } from './broker.js';

/** Names the broker's socket in git's environment (not a secret: only its owner may connect). */
export const CREDENTIAL_SOCKET_ENV = 'SVC_GIT_CREDENTIAL_SOCKET';

/** A question of the helper: `get` wants a credential, `erase` reports that git got a 401 with one. */
export interface CredentialRequest extends CredentialQuery {
  action: 'get' | 'erase';
  /** For `erase`: the password git tried (a token the broker handed out). */
  password?: string;
}

/** The broker's answer; empty when it has nothing for that URL (the helper then fails closed). */
export interface CredentialAnswer {
  username?: string;
  password?: string;
}

export interface CredentialServer {
  socketPath: string;
  close(): Promise<void>;
}

const MAX_REQUEST_BYTES = 8192;

/** A unix socket's path must fit sockaddr_un (108 bytes on Linux, 104 on macOS). */
const MAX_SOCKET_PATH = 100;

/**
 * Starts the socket server of `broker`. `onError` hears broker failures (never a token). The
 * socket lies in a fresh random folder (0700) inside `parentDir` (svc's private state folder,
 * itself made 0700), so no other user, an agent user included, can reach it or even list its
 * name; the system temp folder is used only when that path would be too long for a socket.
 */
export async function startCredentialServer(
  broker: GitCredentialBroker,
  onError: (message: string) => void = () => undefined,
  parentDir?: string,
): Promise<CredentialServer> {
  let parent = tmpdir();
  if (parentDir && join(parentDir, 'git-cred-XXXXXX', 'broker.sock').length <= MAX_SOCKET_PATH) {
    await ensurePrivateDir(parentDir);
    parent = parentDir;
  }
  const dir = await mkdtemp(join(parent, parent === parentDir ? 'git-cred-' : 'svc-git-cred-'));
  await chmod(dir, 0o700);
  const socketPath = join(dir, 'broker.sock');
  const server: Server = createServer((socket) => serve(broker, socket, onError));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => resolve());
  });
  await chmod(socketPath, 0o600);
  let closed = false;
  return {
    socketPath,
    async close() {
      if (closed) return;
      closed = true;
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(dir, { recursive: true, force: true });
    },
  };
}

function serve(broker: GitCredentialBroker, socket: Socket, onError: (message: string) => void): void {
  let input = '';
  socket.setEncoding('utf8');
  socket.on('error', () => undefined);
  socket.on('data', (chunk: string) => {
    input += chunk;
    if (input.length > MAX_REQUEST_BYTES) return socket.destroy();
    const nl = input.indexOf('\n');
    if (nl < 0) return;
    socket.pause();
    answer(broker, input.slice(0, nl))
      .catch((err: unknown) => {
        // The message of an API error names the operation and status, never the credential.
        onError(`git credential: ${err instanceof Error ? err.message : String(err)}`);
        return {};
      })
      .then((reply) => socket.end(`${JSON.stringify(reply)}\n`));
  });
}

async function answer(broker: GitCredentialBroker, line: string): Promise<CredentialAnswer> {
  const req = JSON.parse(line) as Partial<CredentialRequest>;
  const query: CredentialQuery = {
    protocol: typeof req.protocol === 'string' ? req.protocol : undefined,
    host: typeof req.host === 'string' ? req.host : undefined,
    path: typeof req.path === 'string' ? req.path : undefined,
  };
  if (req.action === 'erase') {
    if (typeof req.password === 'string') broker.invalidate(req.password);
    return {};
  }
  if (req.action !== 'get') return {};
  const credential = await broker.credentialForQuery(query);
  return credential ? { username: credential.username, password: credential.token } : {};
}

/** The helper's side: one question to the broker. Rejects on any socket fault or timeout. */
export function askBroker(socketPath: string, request: CredentialRequest, timeoutMs = 120_000): Promise<CredentialAnswer> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(socketPath);
    let data = '';
    const timer = setTimeout(() => socket.destroy(new Error('the credential broker did not answer')), timeoutMs);
    socket.setEncoding('utf8');
    socket.on('connect', () => socket.write(`${JSON.stringify(request)}\n`));
    socket.on('data', (chunk: string) => (data += chunk));
    socket.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    socket.on('end', () => {
      clearTimeout(timer);
      try {
        const parsed = JSON.parse(data.trim() || '{}') as CredentialAnswer;
        resolve(parsed && typeof parsed === 'object' ? parsed : {});
      } catch (err) {
        reject(err);
      }
    });
  });
}
