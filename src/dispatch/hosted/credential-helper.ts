// `svc git-credential <get|store|erase>`: git's credential helper protocol (gitcredentials(7)),
// answered from the broker of the svc process that started git. It fails closed: whenever it has
// no credential for the exact URL (no broker socket, no match, a broker fault) it prints nothing
// and exits non-zero, and with GIT_TERMINAL_PROMPT=0 git then fails instead of prompting.
import type { Readable, Writable } from 'node:stream';
import { askBroker, CREDENTIAL_SOCKET_ENV, type CredentialRequest } from './credential-socket.js';

export interface GitCredentialIo {
  stdin: Readable;
  stdout: Writable;
  env: Record<string, string | undefined>;
}

/** Exit status of the helper: 0 answered (or nothing to do), 1 no credential. */
export type HelperStatus = 0 | 1;

/** Reads git's `key=value` lines up to the blank line (or end of input). */
export async function readCredentialInput(stdin: Readable): Promise<Record<string, string>> {
  const fields: Record<string, string> = {};
  let text = '';
  for await (const chunk of stdin) {
    text += typeof chunk === 'string' ? chunk : (chunk as Buffer).toString('utf8');
    if (/(^|\n)\n/.test(text) || text.length > 65_536) break;
  }
  for (const line of text.split('\n')) {
    if (line === '') break;
    const eq = line.indexOf('=');
    if (eq > 0) fields[line.slice(0, eq)] = line.slice(eq + 1);
  }
  return fields;
}

/** A value git would misread (a newline or NUL splits the protocol) is never answered. */
const safeValue = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && !/[\n\0]/.test(v);

/** Runs one helper action; returns the exit status. Never writes anything but a whole answer. */
export async function runGitCredential(action: string, io: GitCredentialIo): Promise<HelperStatus> {
  // `store` is a no-op: tokens live in the broker's memory only. Unknown actions are ignored, as
  // gitcredentials(7) asks of helpers.
  if (action !== 'get' && action !== 'erase') return 0;
  const input = await readCredentialInput(io.stdin);
  const socketPath = io.env[CREDENTIAL_SOCKET_ENV];
  if (!socketPath) return action === 'get' ? 1 : 0;
  const request: CredentialRequest = { action, protocol: input.protocol, host: input.host, path: input.path };
  if (action === 'erase') {
    // git got a 401 with this password: the broker drops it so the next `get` trades anew.
    try {
      await askBroker(socketPath, { ...request, password: input.password });
    } catch {
      // Nothing to roll back: the token will be refreshed at its expiry anyway.
    }
    return 0;
  }
  let answer: Awaited<ReturnType<typeof askBroker>>;
  try {
    answer = await askBroker(socketPath, request);
  } catch {
    return 1;
  }
  if (!safeValue(answer.username) || !safeValue(answer.password)) return 1;
  io.stdout.write(`username=${answer.username}\npassword=${answer.password}\n`);
  return 0;
}
