// The report of dispatch runs: one document built from the local state alone (run.json, the
// journal, legs.jsonl, the logs and git), so the same run reports the same on any later day. Every
// renderer (junit, markdown, html, json) reads only this. Documented in docs/json.md (RunReport).
import type { LegNetwork } from '../fence/index.js';
import type { BestOf, LegCheck } from '../ports.js';

/** A commit a leg left on its branch. */
export interface ReportCommit {
  sha: string;
  subject: string;
}

/** One card of a run: the leg that ran it, or why none did. */
export interface LegReport {
  key: string;
  title: string | null;
  /** implemented, failed, skipped, not_reached, running (a run still open or crashed mid-leg). */
  disposition: string;
  skipReason: string | null;
  /** Why the leg failed (one line, redacted); null otherwise. */
  reason: string | null;
  startedAt: string | null;
  endedAt: string | null;
  durationMs: number | null;
  exitCode: number | null;
  costUsd: number | null;
  tokens: { in: number | null; out: number | null };
  branch: string | null;
  /** The commit the leg started from, and where its branch ended. */
  base: string | null;
  head: string | null;
  commits: ReportCommit[];
  /** `git diff --stat base head`, or null when git could not tell. */
  diffStat: string | null;
  /** The last lines of the leg's log, redacted, without terminal escapes. */
  logTail: string | null;
  /** The repository's check (.svc/workflow.yml verify): passed, failed (with its output's tail), or none. */
  check: LegCheck;
  /** How many times the agent ran (more than once after failed checks); null without a workflow. */
  attempts: number | null;
  /** A fenced leg (docs/trust.md): its mode and what the fence refused, hosts made visible; null: open. */
  network: LegNetwork | null;
  /** Best-of-N (`--attempts`): every attempt with its check, duration and spend, and which one won. */
  bestOf?: BestOf;
}

export interface RunReport {
  runId: string;
  projectKey: string;
  command: string;
  /** For `continue`, the command the cards were first selected by. */
  originalCommand: string;
  scopeKey: string | null;
  agent: string | null;
  model: string | null;
  /** succeeded, failed, cancelled, timed_out; `running` while the journal holds no close. */
  status: string;
  stopReason: string | null;
  startedAt: string;
  /** The last moment the local state records (the last event or leg); null before any. */
  endedAt: string | null;
  durationMs: number | null;
  totals: {
    cards: number;
    implemented: number;
    failed: number;
    skipped: number;
    notReached: number;
    running: number;
    costUsd: number | null;
    tokens: { in: number | null; out: number | null };
  };
  legs: LegReport[];
  /** run_scope's close-out, when it ran. */
  closeOut: LegReport | null;
}

/** The `json` format: every run asked for, oldest first. */
export interface ReportDocument {
  schema: 'svc.report/1';
  runs: RunReport[];
}

export const REPORT_FORMATS = ['junit', 'markdown', 'html', 'json'] as const;
export type ReportFormat = (typeof REPORT_FORMATS)[number];
