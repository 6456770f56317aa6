// Credentials of hosted runs. A hosted run's own credential (`svc_run_…`) is minted out of band
// (the platform injects it on the real service; `svc server run-token` here) and can trade itself
// for git credentials (getGitCredential). Both are stored only as SHA-256 and die with the run.
//
// The local service plays one source-hosting app installation that writes every repository, so a
// trade hands out ONE installation token shared by all the run's repositories ("repositories in
// one installation share a token"); it is recorded once per repository so the git remote can ask
// "may this token write that repository?".
import { parseRepositoryRef } from '../../contract/repository-ref.js';
import { type PAT_PREFIX, RUN_TOKEN_PREFIX, type GitCredential } from '../../contract/types.js';
import { transaction, type Database } from '../db.js';
import { iso, mintSecret, randomBase62, sha256 } from '../ids.js';
import { notFound, ServiceError, type Reply, type RequestContext } from '../kernel.js';
import { runClosed } from './close.js';
import { getRunRow } from './store.js';

/**
 * Mints a run's own credential; shown once. Only a running hosted run has one. `prefix` is ours
 * (`svc_run_`) unless told: the contract's `svc_pat_` makes a credential shaped as the contract's authentication says
 * every bearer token is, which a client must take as it is.
 */
export function mintRunCredential(
  db: Database,
  runId: string,
  now: Date = new Date(),
  prefix: typeof RUN_TOKEN_PREFIX | typeof PAT_PREFIX = RUN_TOKEN_PREFIX,
): string {
  return transaction(db, () => {
    const run = getRunRow(db, runId);
    if (!run) throw notFound('dispatch run');
    if (run.origin !== 'hosted') {
      throw new ServiceError(409, 'CONFLICT', "only a hosted run has a run credential; a local run uses its operator's token");
    }
    if (run.status !== 'running') throw runClosed();
    const raw = mintSecret(prefix);
    db.prepare('INSERT INTO run_credentials (hash, run_id, workspace_id, project_id, created_at) VALUES (?, ?, ?, ?, ?)').run(
      sha256(raw),
      run.id,
      run.workspace_id,
      run.project_id,
      iso(now),
    );
    return raw;
  });
}

/** Installation tokens look like the source host's (`ghs_` + 36), so redaction rules apply to them. */
const mintGitToken = (): string => `ghs_${randomBase62(36)}`;

interface RepoColumns {
  target_repo: string | null;
  target_repos: string;
  target_repositories: string;
}

/** A `targetRepositories` entry is a name, or an object naming the repository. */
function repositoryName(entry: unknown): string | null {
  if (typeof entry === 'string') return entry;
  if (entry && typeof entry === 'object') {
    const { name, ref } = entry as { name?: unknown; ref?: unknown };
    if (typeof name === 'string' && name) return name;
    if (typeof ref === 'string' && ref) return ref;
  }
  return null;
}

const jsonArray = (text: string): unknown[] => {
  const v: unknown = JSON.parse(text);
  return Array.isArray(v) ? v : [];
};

/** The repositories of a run: the union of its cards' target repositories, in card order. */
export function repositoriesOfRun(db: Database, runId: string): string[] {
  const rows = db
    .prepare(
      `SELECT w.target_repo, w.target_repos, w.target_repositories
         FROM dispatch_cards c JOIN work_items w ON w.id = c.work_item_id
        WHERE c.run_id = ? ORDER BY c.position`,
    )
    .all(runId) as unknown as RepoColumns[];
  const out = new Set<string>();
  for (const r of rows) {
    const names = [r.target_repo, ...jsonArray(r.target_repos), ...jsonArray(r.target_repositories).map(repositoryName)];
    // A card may name its repository by URL (https, ssh, scp-like); this service plays the host's
    // installation and serves every repository as `owner/name` under its own git remote.
    for (const n of names) if (typeof n === 'string' && n.trim()) out.add(parseRepositoryRef(n)?.path ?? n.trim());
  }
  return [...out];
}

/** getGitCredential. Only the run's own credential is answered, and it is refused before the run is read. */
export function gitCredentialRoute(ctx: RequestContext): Reply {
  const { db, principal } = ctx;
  const id = ctx.params.id ?? '';
  if (principal.kind !== 'run' || principal.runId !== id) {
    throw new ServiceError(403, 'FORBIDDEN', "git credentials are answered only to the run's own credential");
  }
  return transaction(db, () => {
    const run = getRunRow(db, id);
    if (!run) throw notFound('dispatch run');
    if (run.status !== 'running') throw runClosed();
    if (run.origin !== 'hosted') throw new ServiceError(409, 'CONFLICT', 'git credentials are for hosted runs');
    const now = ctx.now();
    const expiresAt = iso(new Date(now.getTime() + ctx.config.gitTokenTtlMs));
    const repositories = repositoriesOfRun(db, id);
    const token = mintGitToken();
    const hash = sha256(token);
    const insert = db.prepare('INSERT INTO git_tokens (hash, repository, run_id, created_at, expires_at) VALUES (?, ?, ?, ?, ?)');
    const base = ctx.config.baseUrl.replace(/\/+$/, '');
    const credentials: GitCredential[] = repositories.map((repository) => {
      insert.run(hash, repository, id, iso(now), expiresAt);
      return { repository, url: `${base}/git/${repository}.git`, username: 'x-access-token', token, expiresAt };
    });
    return { status: 200, body: { credentials, dispatchedBy: run.created_by_id } };
  });
}

/**
 * For the smart-HTTP git remote: the run whose live installation token `token` is, when it may
 * write `repository`; null for anything else.
 */
export function gitTokenRun(db: Database, token: string, repository: string, now: Date): string | null {
  const row = db.prepare('SELECT run_id, expires_at, revoked_at FROM git_tokens WHERE hash = ? AND repository = ?').get(sha256(token), repository) as
    | { run_id: string; expires_at: string; revoked_at: string | null }
    | undefined;
  return row && row.revoked_at === null && Date.parse(row.expires_at) > now.getTime() ? row.run_id : null;
}

/** For the smart-HTTP git remote: is `token` a live installation token that may write `repository`? */
export function checkGitToken(db: Database, token: string, repository: string, now: Date): boolean {
  return gitTokenRun(db, token, repository, now) !== null;
}

/** The work item keys of a run's cards: the only `svc/<KEY>` branches its git token may push. */
export function cardKeysOfRun(db: Database, runId: string): string[] {
  const rows = db.prepare('SELECT work_item_key FROM dispatch_cards WHERE run_id = ? ORDER BY position').all(runId) as unknown as Array<{
    work_item_key: string;
  }>;
  return rows.map((r) => r.work_item_key);
}
