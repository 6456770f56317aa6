// The RunSummary a dispatch command answers (the CLI prints it; `--json` serialises it).
import type { DispatchRun } from '../../contract/types.js';
import type { LegSummary } from '../ports.js';
import type { Selection } from '../select/types.js';
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
