// The RunSummary a dispatch command answers (the CLI prints it; `--json` serialises it).
import type { DispatchRun } from '../../contract/types.js';
import type { LegSummary } from '../ports.js';
import { readLegRecords } from '../report/record.js';
import type { Selection } from '../select/types.js';
import { runPaths } from '../state/folder.js';
import type { CardSummary, RunSummary } from './types.js';

export function cardSummaries(selection: Selection): CardSummary[] {
  return selection.cards.map((c) => ({ key: c.key, title: c.title, skipReason: c.skipReason, gatedBy: c.gatedBy }));
}

export function summaryOf(selection: Selection, run: DispatchRun | null, exitCode: number, note: string, legs: LegSummary[] = []): RunSummary {
  return {
    runId: run?.id ?? null,
    command: selection.command,
    scopeKey: selection.scopeKey,
    stopReason: run?.stopReason ?? null,
    status: run?.status ?? null,
    cards: cardSummaries(selection),
    legs,
    exitCode,
    note,
    dryRun: false,
  };
}

/** Commands given keys: when none of their cards can run, that is a failure to report (docs/dispatch.md). */
export const isNamedCommand = (command: string): boolean => ['run', 'run_scope', 'fix', 'review'].includes(command);

/** The one line that says why no card of a named command's set ran: each card's skip reason. */
export function nothingRanNote(selection: Pick<Selection, 'cards'>): string {
  const why = selection.cards.map((c) => `${c.key} ${c.skipReason ?? (c.gatedBy ? `gated by ${c.gatedBy}` : 'not runnable')}`);
  return `no card ran: ${why.length ? why.join('; ') : 'the set is empty'}`;
}

/**
 * The legs of a run that was already closed when a retried command found it by its idempotency
 * key, as recorded: this machine's record of each leg (legs.jsonl: time, reason, spend) where it
 * ran here, else the service's card (disposition, exit code, branch; no time is known: 0).
 */
export function recordedLegs(stateDir: string, run: DispatchRun, selection: Pick<Selection, 'cards'>): LegSummary[] {
  let local: LegSummary[] = [];
  try {
    local = readLegRecords(runPaths(stateDir, run.id)).filter((r) => !r.closeOut);
  } catch {
    // No readable local record: the service's cards say what it recorded.
  }
  const mine = new Map(local.map((r) => [r.key, r]));
  const titles = new Map(selection.cards.map((c) => [c.key, c.title]));
  return run.cards
    .filter((c) => c.disposition !== 'skipped' && c.disposition !== 'queued' && c.disposition !== 'not_reached')
    .map((c) => {
      const r = mine.get(c.workItemKey);
      if (r) {
        const { startedAt: _s, endedAt: _e, repo: _r, base: _b, head: _h, closeOut: _c, ...leg } = r as typeof r & Record<string, unknown>;
        return { ...leg, disposition: String(c.disposition) };
      }
      return {
        key: c.workItemKey,
        title: titles.get(c.workItemKey) ?? '',
        disposition: String(c.disposition),
        durationMs: 0,
        exitCode: c.exitCode,
        reason: null,
        costUsd: null,
        tokens: { in: null, out: null },
        sessionBranch: c.sessionBranch,
      };
    });
}
