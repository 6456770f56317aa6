// Bearer authentication (the contract's authentication). Every failure (no header, malformed, unknown, revoked,
// expired) returns null, and the HTTP layer answers one undifferentiated 401: a caller learns
// nothing about which tokens exist.
//
// Two credential kinds:
// - `svc_pat_…` personal access tokens, in the core `tokens` table.
// - `svc_run_…` a hosted run's own credential (or, minted with the contract's prefix, `svc_pat_…`). Its table `run_credentials(hash TEXT PRIMARY KEY,
//   run_id, workspace_id, project_id, revoked_at)` belongs to the dispatch-runs module; when that
//   module is not loaded the table is missing and the credential is simply unknown (401).
import { PAT_PREFIX, RUN_TOKEN_PREFIX, SCOPES, type Scope } from '../contract/types.js';
import type { Database } from './db.js';
import { sha256 } from './ids.js';
import type { Principal } from './kernel.js';

const TOKEN_SHAPE = /^svc_(pat|run)_[A-Za-z0-9]{16,128}$/;

interface TokenRow {
  id: string;
  user_id: string;
  workspace_id: string;
  project_id: string | null;
  scopes: string;
  expires_at: string | null;
  revoked_at: string | null;
}

/** Extracts the raw token from an Authorization header, or null when malformed. */
export function bearerToken(header: string | string[] | undefined): string | null {
  if (typeof header !== 'string') return null;
  const m = /^Bearer ([^\s]+)$/i.exec(header.trim());
  if (!m || !TOKEN_SHAPE.test(m[1]!)) return null;
  return m[1]!;
}

/** Resolves the caller, or null for any kind of invalid credential. */
export function authenticate(db: Database, header: string | string[] | undefined, now: Date): Principal | null {
  const raw = bearerToken(header);
  if (!raw) return null;
  // A run credential may carry the contract's one prefix too (the contract's authentication gives every bearer token
  // `svc_pat_`): a `svc_pat_` token that is no personal access token may be a run's credential.
  if (raw.startsWith(PAT_PREFIX)) return patPrincipal(db, raw, now) ?? runPrincipal(db, raw);
  if (raw.startsWith(RUN_TOKEN_PREFIX)) return runPrincipal(db, raw);
  return null;
}

function patPrincipal(db: Database, raw: string, now: Date): Principal | null {
  const row = db
    .prepare(
      `SELECT t.id, t.user_id, t.workspace_id, t.project_id, t.scopes, t.expires_at, t.revoked_at
         FROM tokens t
         JOIN memberships m ON m.workspace_id = t.workspace_id AND m.user_id = t.user_id
        WHERE t.hash = ?`,
    )
    .get(sha256(raw)) as TokenRow | undefined;
  if (!row || row.revoked_at) return null;
  if (row.expires_at && Date.parse(row.expires_at) <= now.getTime()) return null;
  const granted = JSON.parse(row.scopes) as string[];
  return {
    kind: 'pat',
    tokenId: row.id,
    userId: row.user_id,
    workspaceId: row.workspace_id,
    projectId: row.project_id,
    scopes: SCOPES.filter((s): s is Scope => granted.includes(s)),
  };
}

function runPrincipal(db: Database, raw: string): Principal | null {
  try {
    const row = db.prepare('SELECT run_id, workspace_id, project_id, revoked_at FROM run_credentials WHERE hash = ?').get(sha256(raw)) as
      | { run_id: string; workspace_id: string; project_id: string; revoked_at: string | null }
      | undefined;
    if (!row || row.revoked_at) return null;
    return { kind: 'run', runId: row.run_id, workspaceId: row.workspace_id, projectId: row.project_id };
  } catch (err) {
    // The dispatch-runs module owns the table; without it no run credential can be valid.
    if (err instanceof Error && /no such table/i.test(err.message)) return null;
    throw err;
  }
}

/** The bucket a principal's requests count against in the rate limiter. */
export const rateBucket = (p: Principal): string => (p.kind === 'pat' ? `pat:${p.tokenId}` : `run:${p.runId}`);
