// The seam between the dispatch engine and whoever writes pull requests (GitHub's REST API on a
// hosted run, the user's own `gh` on a local one). The engine calls it only after a leg's branch
// was pushed (or, for a review, after the agent said its piece); every body it is handed is already
// redacted, and an implementation never puts a body into argv or a log.
import type { Delivery } from '../../contract/types.js';

/** What a leg tells the pull-request writer. Every string is redacted already. */
export interface PullRequestLeg {
  runId: string;
  /** The dispatch command of the run (`run`, `batch`, `fix`, …). */
  command: string;
  key: string;
  title: string;
  /** The git repository (a worktree's main repository or a hosted clone) whose `origin` is the PR's repository. */
  repo: string;
  /** The pushed branch, `svc/<KEY>`. */
  branch: string;
  durationMs: number;
  tokens: { in: number | null; out: number | null };
  costUsd: number | null;
  /** The agent's final message, or null when it said nothing usable. */
  finalMessage: string | null;
  /** The item's delivery in that repository (fix and review need one; implement takes its baseRef). */
  delivery: Delivery | null;
  draft: boolean;
}

/** What was done, for the summary, `--json`, the run event and the local state. */
export interface PullRequestRef {
  /** opened / updated: the leg's PR; reviewed / commented: the delivery's; hint: nothing was written. */
  action: 'opened' | 'updated' | 'reviewed' | 'commented' | 'hint';
  /** The pull request's web address (for `hint`: the compare page, or null when the host is not GitHub). */
  url: string | null;
  number: number | null;
  /** For `hint`: the one line shown to the user. */
  hint?: string;
}

/** The three calls the engine makes. Each rejects with a one-line, token-free message on failure. */
export interface PullRequestWriter {
  /** After an implemented leg's branch is pushed: open a PR from the branch, or update the open one. */
  openOrUpdatePullRequest(leg: PullRequestLeg, body: string): Promise<PullRequestRef>;
  /** A review leg's text, as a review with event COMMENT on the delivery's PR (never approve/request changes). */
  postReview(leg: PullRequestLeg, body: string): Promise<PullRequestRef>;
  /** A fix leg's account of what it changed, as a comment on the delivery's PR. */
  commentOnFix(leg: PullRequestLeg, body: string): Promise<PullRequestRef>;
}

/** A failure of the pull-request step: the leg stays implemented, the run goes on, a warning says why. */
export class PullRequestError extends Error {
  override name = 'PullRequestError';
}
