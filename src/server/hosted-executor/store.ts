// Reading and writing the hosted_runners rows (schema.ts). The run record shows its runner as
// `agentInstance` (the contract leaves that object's inner shape open).
import type { Database } from '../db.js';
import { iso } from '../ids.js';

/** What `agentInstance` says about a run's runner. */
export interface HostedRunner {
  engine: string;
  /** The container's name (podman, docker) or the Job's (kubernetes). */
  name: string;
  image: string;
  /** starting, running, exited, failed to start, timed out, dry run. */
  state: string;
  exitCode: number | null;
  /** Where the runner's output is kept: a file of the service's host. */
  logs: string | null;
  /** The engine's own one-line error, when it refused or the runner died early. */
  error: string | null;
  startedAt: string;
  endedAt: string | null;
}

interface Row {
  engine: string;
  name: string;
  image: string;
  state: string;
  exit_code: number | null;
  logs: string | null;
  error: string | null;
  started_at: string;
  ended_at: string | null;
}

export function runnerOf(db: Database, runId: string): HostedRunner | null {
  const r = db.prepare('SELECT * FROM hosted_runners WHERE run_id = ?').get(runId) as Row | undefined;
  if (!r) return null;
  return {
    engine: r.engine,
    name: r.name,
    image: r.image,
    state: r.state,
    exitCode: r.exit_code,
    logs: r.logs,
    error: r.error,
    startedAt: r.started_at,
    endedAt: r.ended_at,
  };
}

export function recordRunner(db: Database, runId: string, r: Pick<HostedRunner, 'engine' | 'name' | 'image' | 'state' | 'logs'>, now: Date): void {
  db.prepare(
    `INSERT INTO hosted_runners (run_id, engine, name, image, state, logs, started_at) VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (run_id) DO UPDATE SET state = excluded.state`,
  ).run(runId, r.engine, r.name, r.image, r.state, r.logs, iso(now));
}

export function updateRunner(db: Database, runId: string, patch: { state: string; exitCode?: number | null; error?: string | null; ended?: Date }): void {
  db.prepare(
    `UPDATE hosted_runners SET state = ?, exit_code = COALESCE(?, exit_code), error = COALESCE(?, error),
       ended_at = COALESCE(?, ended_at) WHERE run_id = ?`,
  ).run(patch.state, patch.exitCode ?? null, patch.error ?? null, patch.ended ? iso(patch.ended) : null, runId);
}
