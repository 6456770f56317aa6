// Opening a run. The open is retried by the client with one idempotencyKey; a 409 means a card is
// already in another running run (another machine took it from the shared queue): reselect without
// it. Each retry must drop at least one new card of a finite list, so it cannot loop.
import { KEY_PATTERN, type DispatchCardInput, type DispatchRunOpen, type DispatchRunOpened } from '../../contract/types.js';
import { serviceErrorOf, type DispatchService } from '../ports.js';
import type { Selection } from '../select/types.js';

export function openBody(selection: Selection, projectKey: string, idempotencyKey: string, agent: string, model?: string): DispatchRunOpen {
  const cards: DispatchCardInput[] = selection.cards.map((c) => (c.skipReason ? { workItemKey: c.key, skipReason: c.skipReason } : { workItemKey: c.key }));
  return {
    projectKey,
    command: selection.command,
    origin: 'local',
    ...(selection.scopeKey ? { scopeKey: selection.scopeKey } : {}),
    agent,
    ...(model ? { model } : {}),
    idempotencyKey,
    cards,
  };
}

/** The runnable keys of `selection` a 409's message names (a hint only: never trusted beyond the set). */
export function conflictingKeys(error: unknown, selection: Selection): string[] {
  const message = serviceErrorOf(error).message ?? '';
  const named = new Set(message.match(new RegExp(KEY_PATTERN.source.slice(1, -1), 'g')) ?? []);
  return selection.cards.filter((c) => !c.skipReason && named.has(c.key)).map((c) => c.key);
}

/**
 * Key → where the 409 said it is (`in run run_… (running)`); a card the message names no run for is
 * `already in another running run`. A hint for the one line a person reads, as the keys are.
 */
export function holdersOf(error: unknown, keys: readonly string[]): Map<string, string> {
  const message = serviceErrorOf(error).message ?? '';
  return new Map(
    keys.map((k) => {
      const run = new RegExp(`(?:^|[\\s,:])${k.replace(/[-]/g, '\\-')} \\(in run ([A-Za-z0-9_-]+)\\)`).exec(message)?.[1];
      return [k, run ? `is in run ${run} (running)` : 'already in another running run'];
    }),
  );
}

/** Every runnable card was taken elsewhere: no run opened; `held` says where each card is. */
export interface NothingOpened {
  opened: null;
  held: ReadonlyMap<string, string>;
}

export interface OpenResult {
  opened: DispatchRunOpened;
  selection: Selection;
  /** The keys a 409 said another running run holds (another machine's cards), in the order met. */
  takenElsewhere: string[];
}

/**
 * Opens the run, reselecting on 409 without the conflicting cards. Gives up (rethrowing the 409)
 * when the error names none of our cards. No other cap: each 409 excludes at least one more of the
 * selection's cards, and a cap would only hand the rest to a fresh selection (`auto`'s next round:
 * another listing and another read of origin) that tries the same cards. Returns `opened: null`
 * when a reselection leaves nothing to run (every runnable card was taken elsewhere). `onTaken` hears the keys
 * of each 409 as they are excluded (whatever the outcome of the open), so a caller that selects
 * again later (`auto`'s rounds, its "is more ready?" check) can leave another machine's cards alone:
 * they stay ready after that machine's run closes, since a run moves no status.
 */
export async function openWithReselect(
  service: Pick<DispatchService, 'openDispatchRun'>,
  first: Selection,
  body: (s: Selection) => DispatchRunOpen,
  reselect: (exclude: ReadonlySet<string>) => Promise<Selection>,
  info: (message: string) => void,
  onTaken?: (keys: readonly string[]) => void,
): Promise<OpenResult | NothingOpened> {
  let selection = first;
  const exclude = new Set<string>();
  const held = new Map<string, string>();
  for (;;) {
    try {
      return { opened: await service.openDispatchRun(body(selection)), selection, takenElsewhere: [...exclude] };
    } catch (error) {
      const fault = serviceErrorOf(error);
      if (fault.status !== 409) throw error;
      const taken = conflictingKeys(error, selection).filter((k) => !exclude.has(k));
      if (taken.length === 0) throw error;
      for (const k of taken) exclude.add(k);
      for (const [k, where] of holdersOf(error, taken)) held.set(k, where);
      onTaken?.(taken);
      selection = await reselect(exclude);
      // Nothing left to run: no run is opened (the caller's one line says where each card is).
      if (selection.empty) return { opened: null, held };
      info(`${taken.map((k) => `${k} ${held.get(k)}`).join('; ')}: reselecting without ${taken.length === 1 ? 'it' : 'them'}`);
    }
  }
}
