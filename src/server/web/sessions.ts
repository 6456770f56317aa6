// Sessions of the read-only pages: a random id in an HttpOnly, SameSite=Strict cookie, mapped in
// memory to the token the user typed. Each request authenticates that token again, so revoking or
// expiring it ends the session at once; a restart of the server ends every session (log in again).
// The token never leaves this process: not in the cookie, a page, a log or the database.
import { randomBytes } from 'node:crypto';

export const COOKIE = 'svc_session';
const TTL_MS = 12 * 60 * 60_000;
const MAX_SESSIONS = 10_000;

interface Session {
  token: string;
  expiresAt: number;
}

export class SessionStore {
  private readonly sessions = new Map<string, Session>();

  create(token: string, now: number): string {
    if (this.sessions.size >= MAX_SESSIONS) this.sweep(now);
    if (this.sessions.size >= MAX_SESSIONS) this.sessions.delete(this.sessions.keys().next().value!);
    const id = randomBytes(32).toString('base64url');
    this.sessions.set(id, { token, expiresAt: now + TTL_MS });
    return id;
  }

  token(id: string | null, now: number): string | null {
    if (!id) return null;
    const s = this.sessions.get(id);
    if (!s) return null;
    if (s.expiresAt <= now) {
      this.sessions.delete(id);
      return null;
    }
    return s.token;
  }

  drop(id: string | null): void {
    if (id) this.sessions.delete(id);
  }

  private sweep(now: number): void {
    for (const [id, s] of this.sessions) if (s.expiresAt <= now) this.sessions.delete(id);
  }
}

export function sessionCookie(id: string, secure: boolean): string {
  return `${COOKIE}=${id}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${TTL_MS / 1000}${secure ? '; Secure' : ''}`;
}

export function clearedCookie(): string {
  return `${COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0`;
}

/** The session id from a Cookie header, or null. */
export function sessionIdOf(header: string | undefined): string | null {
  if (!header) return null;
  for (const part of header.split(';')) {
    const [name, ...rest] = part.trim().split('=');
    if (name === COOKIE) return rest.join('=') || null;
  }
  return null;
}
