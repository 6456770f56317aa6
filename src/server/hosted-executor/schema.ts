// The runner the hosted executor started for a hosted run (one per run): which engine, the
// container or Job's name, its state and exit, and where its logs are kept. `svc runs show` finds
// it in the run's `agentInstance` (getDispatchRun). No credential is ever stored here.
export const HOSTED_RUNNERS_SCHEMA = `
CREATE TABLE IF NOT EXISTS hosted_runners (
  run_id TEXT PRIMARY KEY REFERENCES dispatch_runs(id), engine TEXT NOT NULL, name TEXT NOT NULL,
  image TEXT NOT NULL, state TEXT NOT NULL, exit_code INTEGER, logs TEXT, error TEXT,
  started_at TEXT NOT NULL, ended_at TEXT);
`;
