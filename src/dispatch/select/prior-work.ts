// Work advances (DISPATCH §4): a run never moves a work item's status, so `next`, `batch` and
// `auto` would pick the same implemented cards on every invocation. A card is skipped (unless
// --rerun) when it has an open delivery, or when an earlier local run implemented it and its branch
// still holds that work: `svc/<KEY>` exists in the repository and has commits the base (HEAD, or
// the run's base ref) does not. A branch deleted, or merged into the base, no longer holds pending
// work, and the card is picked again (a merged card normally is done by then).
import { execa } from 'execa';
import type { WorkItemDetail } from '../../contract/types.js';
import { branchFor } from '../git/worktree.js';
import { recordedLegEnds } from './recent.js';

/**
 * The status an implemented leg gives its item (lifecycle/record-implementation.ts): open, but work
 * that waits for a person, not for an agent. Lane commands leave such items out unless --rerun.
 */
export const IMPLEMENTED_STATUS = 'in_review';

/** Key → the latest local run (of `projectKey`) whose leg of that card ended `implemented`. */
export function implementedRuns(stateDir: string, projectKey: string): Map<string, string> {
  const found = new Map<string, { runId: string; at: string }>();
  for (const { record, key, disposition } of recordedLegEnds(stateDir, projectKey)) {
    if (disposition !== 'implemented') continue;
    const prev = found.get(key);
    if (!prev || prev.at <= record.openedAt) found.set(key, { runId: record.runId, at: record.openedAt });
  }
  return new Map([...found].map(([k, v]) => [k, v.runId]));
}

/** Commits on `svc/<KEY>` that `base` lacks; 0 when the branch does not exist. */
async function pendingCommits(repo: string, key: string, base: string): Promise<number> {
  const r = await execa('git', ['rev-list', '--count', `${base}..refs/heads/${branchFor(key)}`], { cwd: repo, reject: false, stdin: 'ignore' });
  return r.exitCode === 0 ? Number.parseInt(r.stdout.trim(), 10) || 0 : 0;
}

/** The skip reason of earlier work on a card, or null; built once per command invocation. */
export function priorWorkCheck(opts: {
  stateDir: string;
  projectKey: string;
  repo: string;
  baseRef?: string;
}): (item: WorkItemDetail) => Promise<string | null> {
  let runs: Map<string, string> | null = null;
  return async (item) => {
    // The listing leaves recorded items out, but another machine may record one between our
    // listing and our read of it: the read is what counts.
    if (item.status === IMPLEMENTED_STATUS) return `implemented by an earlier run (${IMPLEMENTED_STATUS})`;
    const open = item.deliveries.find((d) => d.state === 'open');
    if (open) return `has an open delivery (${open.repo}#${open.number})`;
    runs ??= implementedRuns(opts.stateDir, opts.projectKey);
    const runId = runs.get(item.key);
    if (!runId) return null;
    if ((await pendingCommits(opts.repo, item.key, opts.baseRef ?? 'HEAD')) === 0) return null;
    return `implemented in run ${runId} on ${branchFor(item.key)}`;
  };
}
