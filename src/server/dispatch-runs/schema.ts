// Tables of the dispatch-runs module. A run's cards are its legs, kept in the order the open gave
// them (`position`); its events are one ordered stream numbered by `seq`, and `dispatch_runs.seq`
// is the seq of the last stored event (0 before any), so an append and a read agree on the cursor.
// `run_credentials` is read by the core's auth layer (src/server/auth.ts) to authenticate
// `svc_run_…` credentials; `git_tokens` holds the installation tokens of getGitCredential, one row per
// repository a token may write.
export const DISPATCH_RUNS_SCHEMA = `
CREATE TABLE IF NOT EXISTS dispatch_runs (
  id TEXT PRIMARY KEY, workspace_id TEXT NOT NULL REFERENCES workspaces(id),
  project_id TEXT NOT NULL REFERENCES projects(id), command TEXT NOT NULL, origin TEXT NOT NULL,
  scope_work_item_id TEXT REFERENCES work_items(id), scope_label TEXT,
  status TEXT NOT NULL DEFAULT 'running', stop_reason TEXT, agent TEXT, model TEXT,
  started_at TEXT NOT NULL, ended_at TEXT, last_heartbeat_at TEXT, created_by_id TEXT,
  idempotency_key TEXT, seq INTEGER NOT NULL DEFAULT 0,
  UNIQUE (workspace_id, idempotency_key));
CREATE INDEX IF NOT EXISTS dispatch_runs_running ON dispatch_runs (status, origin, last_heartbeat_at);
CREATE INDEX IF NOT EXISTS dispatch_runs_by_project ON dispatch_runs (project_id, status);
CREATE TABLE IF NOT EXISTS dispatch_cards (
  run_id TEXT NOT NULL REFERENCES dispatch_runs(id), position INTEGER NOT NULL,
  work_item_id TEXT NOT NULL REFERENCES work_items(id), work_item_key TEXT NOT NULL,
  disposition TEXT NOT NULL, skip_reason TEXT, session_branch TEXT, exit_code INTEGER,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (run_id, position), UNIQUE (run_id, work_item_key));
CREATE INDEX IF NOT EXISTS dispatch_cards_by_item ON dispatch_cards (work_item_id, disposition);
CREATE TABLE IF NOT EXISTS dispatch_events (
  run_id TEXT NOT NULL REFERENCES dispatch_runs(id), seq INTEGER NOT NULL, work_item_key TEXT,
  disposition TEXT, session_branch TEXT, exit_code INTEGER, body TEXT, created_at TEXT NOT NULL,
  PRIMARY KEY (run_id, seq));
CREATE INDEX IF NOT EXISTS dispatch_events_with_body ON dispatch_events (created_at) WHERE body IS NOT NULL;
CREATE TABLE IF NOT EXISTS run_credentials (
  hash TEXT PRIMARY KEY, run_id TEXT NOT NULL REFERENCES dispatch_runs(id),
  workspace_id TEXT NOT NULL, project_id TEXT NOT NULL, created_at TEXT NOT NULL, revoked_at TEXT);
CREATE INDEX IF NOT EXISTS run_credentials_by_run ON run_credentials (run_id);
CREATE TABLE IF NOT EXISTS git_tokens (
  hash TEXT NOT NULL, repository TEXT NOT NULL, run_id TEXT NOT NULL REFERENCES dispatch_runs(id),
  created_at TEXT NOT NULL, expires_at TEXT NOT NULL, revoked_at TEXT,
  PRIMARY KEY (hash, repository));
CREATE INDEX IF NOT EXISTS git_tokens_by_run ON git_tokens (run_id);
`;
