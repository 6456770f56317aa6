// The one holder of a hosted run's git tokens. It trades the run credential for git credentials
// (getGitCredential) and keeps them in memory only: never a file, an environment variable or an argv.
// git reaches them through `svc git-credential`, which asks this broker over a private socket
// (credential-socket.ts).
//
// Refresh: a token is traded again when less than `refreshAheadMs` (5 minutes) of its life is
// left, or less than half of its lifetime for tokens shorter than ten minutes (so a short-lived
// token is not re-minted on every git call), and at once when git reports a 401 (`erase`).
import { sameRepository } from '../../contract/repository-ref.js';
import type { GitCredential, GitCredentials } from '../../contract/types.js';

/** The one operation the broker needs: getGitCredential, called with the run's own credential. */
export interface GitCredentialSource {
  getGitCredential(runId: string): Promise<GitCredentials>;
}

export interface GitCredentialBrokerOptions {
  api: GitCredentialSource;
  runId: string;
  /** Refresh when less than this is left (default 5 minutes). */
  refreshAheadMs?: number;
  /** Epoch ms; tests move it. */
  now?: () => number;
}

/** What git sends a credential helper (`protocol`, `host`, `path` with credential.useHttpPath). */
export interface CredentialQuery {
  protocol?: string;
  host?: string;
  path?: string;
}

/** The run has no git credential for a repository (it is not among its cards' repositories). */
export class NoGitCredentialError extends Error {
  override readonly name = 'NoGitCredentialError';
}

interface Held {
  credential: GitCredential;
  receivedAt: number;
}

export const DEFAULT_REFRESH_AHEAD_MS = 5 * 60_000;

/** `path` of a URL as git sends it: no leading or trailing slash, no `.git` suffix. */
function normalPath(path: string): string {
  return path
    .replace(/^\/+/, '')
    .replace(/\/+$/, '')
    .replace(/\.git$/, '');
}

export class GitCredentialBroker {
  private readonly api: GitCredentialSource;
  private readonly runId: string;
  private readonly refreshAheadMs: number;
  private readonly now: () => number;
  private held = new Map<string, Held>();
  /** repository → its smart-HTTP address, as the last trade gave it. */
  private readonly addresses = new Map<string, string>();
  private inFlight: Promise<void> | null = null;
  /** Every token ever handed out to this process, for redaction of logs and events. */
  private readonly seen = new Set<string>();
  private trades = 0;
  private disposed = false;

  constructor(opts: GitCredentialBrokerOptions) {
    this.api = opts.api;
    this.runId = opts.runId;
    this.refreshAheadMs = opts.refreshAheadMs ?? DEFAULT_REFRESH_AHEAD_MS;
    this.now = opts.now ?? Date.now;
  }

  /** How many times getGitCredential was called (tests assert refreshes with it). */
  get tradeCount(): number {
    return this.trades;
  }

  /** The run's credentials, traded first when none is held or any needs a refresh. */
  async all(): Promise<GitCredential[]> {
    if (this.held.size === 0 || [...this.held.values()].some((h) => this.stale(h))) await this.refresh();
    return [...this.held.values()].map((h) => h.credential);
  }

  /**
   * A fresh credential for a repository, named as a card names it (`owner/name` or a URL) and
   * matched against each credential's `repository` however the service shaped it; throws
   * NoGitCredentialError when the run has none for it.
   */
  async credentialFor(repository: string): Promise<GitCredential> {
    const current = this.find(repository);
    if (current && !this.stale(current)) return current.credential;
    await this.refresh();
    const next = this.find(repository);
    if (!next) throw new NoGitCredentialError(`the run has no git credential for ${repository}`);
    return next.credential;
  }

  /** The held credential of `repository`: its exact name first, else the same repository by shape. */
  private find(repository: string): Held | undefined {
    return this.held.get(repository) ?? [...this.held].find(([name]) => sameRepository(name, repository))?.[1];
  }

  /**
   * The credential whose URL git is asking about, or null (the helper then fails closed). Matching
   * is on protocol, host (with port) and path: without `credential.useHttpPath` there is no path
   * and nothing matches, so one repository's token never answers for another.
   */
  async credentialForQuery(q: CredentialQuery): Promise<GitCredential | null> {
    if (!q.protocol || !q.host || !q.path) return null;
    // The addresses outlive their tokens (an invalidated token keeps its URL known), so an unknown
    // URL costs at most the first trade, never one per question.
    if (this.addresses.size === 0) await this.all();
    const hit = [...this.addresses].find(([, url]) => matches(url, q));
    return hit ? this.credentialFor(hit[0]) : null;
  }

  /** git got a 401 with `token` (it called `erase`): drop it so the next request trades again. */
  invalidate(token: string): boolean {
    let dropped = false;
    for (const [repo, h] of this.held) {
      if (h.credential.token === token) {
        this.held.delete(repo);
        dropped = true;
      }
    }
    return dropped;
  }

  /** Drops every credential for `owner/name` (our own git call failed authentication). */
  invalidateRepository(repository: string): void {
    for (const name of [...this.held.keys()]) if (name === repository || sameRepository(name, repository)) this.held.delete(name);
  }

  /** Every token this broker has held, for the redactor of logs and events. */
  secrets(): string[] {
    return [...this.seen];
  }

  /** Forgets every token; later requests fail. */
  dispose(): void {
    this.disposed = true;
    this.held.clear();
  }

  private stale(h: Held): boolean {
    const expires = Date.parse(h.credential.expiresAt);
    if (!Number.isFinite(expires)) return true;
    const lifetime = Math.max(0, expires - h.receivedAt);
    const ahead = Math.min(this.refreshAheadMs, lifetime / 2);
    return expires - this.now() <= ahead;
  }

  /** One trade at a time: concurrent git calls share the answer of a single getGitCredential. */
  private refresh(): Promise<void> {
    if (this.disposed) return Promise.reject(new NoGitCredentialError('the git credential broker was disposed'));
    this.inFlight ??= (async () => {
      try {
        this.trades += 1;
        const answer = await this.api.getGitCredential(this.runId);
        const receivedAt = this.now();
        const next = new Map<string, Held>();
        for (const c of answer.credentials ?? []) {
          if (!c || typeof c.repository !== 'string' || typeof c.token !== 'string' || typeof c.url !== 'string') continue;
          this.seen.add(c.token);
          this.addresses.set(c.repository, c.url);
          next.set(c.repository, { credential: c, receivedAt });
        }
        if (!this.disposed) this.held = next;
      } finally {
        this.inFlight = null;
      }
    })();
    return this.inFlight;
  }
}

function matches(address: string, q: CredentialQuery): boolean {
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    return false;
  }
  return (
    url.protocol.replace(/:$/, '') === q.protocol &&
    url.host.toLowerCase() === (q.host ?? '').toLowerCase() &&
    normalPath(decodeURIComponent(url.pathname)) === normalPath(q.path ?? '')
  );
}
