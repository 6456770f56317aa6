// Work advances (docs/dispatch.md, "Work advances"): a run never moves a work item's status, so
// `next`, `batch` and `auto` would pick the same implemented cards on every invocation. A card is
// skipped (unless --rerun) when what the machines share says its work exists: it has an open
// delivery, or `svc/<KEY>` on origin holds commits the base does not (another machine, or this one,
// pushed it). A local run's work that was never pushed counts on this machine alone: an earlier
// local run implemented the card and its local branch still holds commits the base lacks. A branch
// deleted, or merged into the base, no longer holds pending work, and the card is picked again.
import type { WorkItemDetail } from '../../contract/types.js';
import { objectsPresent } from '../git/objects.js';
import { BRANCH_PREFIX, branchFor, gitAnswer, gitRun, hasOrigin, repoPaths } from '../git/run-git.js';
import { recordedLegEnds } from './recent.js';

/** How long one `git ls-remote` of origin may take before selection goes on without it. */
const LS_REMOTE_TIMEOUT_MS = 20_000;

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

/** git for these questions: it must fail rather than ask for a password. */
const git = (repo: string, args: string[], timeoutMs = 0, signal?: AbortSignal) =>
  gitAnswer(repo, args, { env: { ...process.env, GIT_TERMINAL_PROMPT: '0' }, timeoutMs, ...(signal ? { signal } : {}) });

/**
 * Whether `tip` holds commits `base` lacks: an object this clone has never seen always does. `has`:
 * whether the clone has it, where a batch already asked (commitsPresent).
 */
async function aheadOf(repo: string, tip: string, base: string, has?: boolean): Promise<boolean> {
  if (!(has ?? (await git(repo, ['cat-file', '-e', `${tip}^{commit}`])).ok)) return true;
  return !(await git(repo, ['merge-base', '--is-ancestor', tip, base])).ok;
}

/**
 * Which of `tips` this clone has as commits: in a fleet most of origin's `svc/*` tips are other
 * machines' commits this clone has never fetched, and a selection meets many of them (one
 * `cat-file -e` each was 22 git processes per card at 16 workers). git's files answer
 * (objects.ts), else one `git cat-file --batch-check` for them all. null where git could not
 * answer either: each tip is then asked on its own.
 */
async function commitsPresent(repo: string, tips: readonly string[]): Promise<Set<string> | null> {
  if (tips.length === 0) return new Set();
  const read = await repoPaths(repo).then(
    ({ common }) => objectsPresent(common, tips),
    () => null,
  );
  if (read) return read;
  const answer = await gitRun(repo, ['cat-file', '--batch-check=%(objecttype)'], tips.map((t) => `${t}^{commit}\n`).join('')).catch(() => null);
  if (answer === null) return null;
  const lines = answer.split('\n');
  return new Set(tips.filter((_, i) => lines[i] === 'commit'));
}

/**
 * Of `tips` (commits this clone has), those holding commits `base` lacks, in one `git rev-list` for
 * them all: a tip is listed unless `base` reaches it. One `merge-base --is-ancestor` each was a git
 * process per selection for every card earlier invocations of this machine pushed and nobody merged
 * yet (34 of them cost a selection 130-380 ms). null where git could not answer.
 */
async function tipsAhead(repo: string, tips: readonly string[], base: string): Promise<Set<string> | null> {
  if (tips.length === 0) return new Set();
  const listed = await gitRun(repo, ['rev-list', '--stdin'], `${[...tips, `^${base}`].join('\n')}\n`).catch(() => null);
  if (listed === null) return null;
  const out = new Set(listed.split('\n'));
  return new Set(tips.filter((t) => out.has(t)));
}

/**
 * origin's `svc/*` branches, one `git ls-remote` for the whole selection: key → commit. A repository
 * without origin has none; one that cannot be reached has none and a `failure` to say once.
 */
async function originBranches(repo: string, withOrigin: Promise<boolean>, signal: AbortSignal): Promise<OriginRead> {
  const found = new Map<string, string>();
  const none: OriginRead = { branches: found, has: async () => new Map(), ahead: async () => new Set(), failure: null };
  if (!(await withOrigin)) return none;
  const r = await git(repo, ['ls-remote', '--heads', 'origin', `refs/heads/${BRANCH_PREFIX}*`], LS_REMOTE_TIMEOUT_MS, signal);
  if (!r.ok) {
    const why = r.stderr.trim().split('\n').filter(Boolean).pop() ?? 'no answer';
    return { ...none, failure: `could not read origin's ${BRANCH_PREFIX}* branches (${why}); work pushed from other machines is not seen this time` };
  }
  for (const line of r.stdout.split('\n')) {
    const [sha, ref] = line.split('\t');
    if (sha && ref?.startsWith(`refs/heads/${BRANCH_PREFIX}`)) found.set(ref.slice(`refs/heads/${BRANCH_PREFIX}`.length), sha);
  }
  // Each tip is asked once per read of origin, and only when a card needs it.
  const known = new Map<string, boolean>();
  let failed = false;
  const has = async (tips: readonly string[]) => {
    const asked = [...new Set(tips)].filter((t) => !known.has(t));
    if (asked.length > 0 && !failed) {
      const present = await commitsPresent(repo, asked);
      if (present) for (const t of asked) known.set(t, present.has(t));
      else failed = true;
    }
    return failed ? null : known;
  };
  // Which tips are ahead of the base: asked once per read, for every tip the clone has.
  const aheads = new Map<string, Promise<ReadonlySet<string> | null>>();
  const ahead = (base: string) => {
    let answer = aheads.get(base);
    if (!answer) {
      answer = has([...found.values()]).then((known) =>
        known
          ? tipsAhead(
              repo,
              [...found.values()].filter((t) => known.get(t)),
              base,
            )
          : null,
      );
      aheads.set(base, answer);
    }
    return answer;
  };
  return { branches: found, has, ahead, failure: null };
}

/** origin's `svc/*` tips as one selection read them, and which of them this clone has. */
interface OriginRead {
  branches: Map<string, string>;
  /** Tip → whether this clone has that commit; null where git could not say. */
  has(tips: readonly string[]): Promise<ReadonlyMap<string, boolean> | null>;
  /** Of the tips this clone has, those holding commits `base` lacks; null where git could not say. */
  ahead(base: string): Promise<ReadonlySet<string> | null>;
  /** Why origin could not be read, said once by the first card that needs it; null when it was. */
  failure: string | null;
}

/**
 * Whether origin's `svc/<KEY>` holds commits `base` lacks, asked for this card alone (before its
 * leg, where selection was some time ago). A repository without origin, or one that cannot be
 * reached, says no: the selection's warning said so already.
 */
export async function pushedOnOrigin(repo: string, key: string, base: string): Promise<boolean> {
  const r = await git(repo, ['ls-remote', '--heads', 'origin', `refs/heads/${branchFor(key)}`], LS_REMOTE_TIMEOUT_MS);
  const sha = r.ok ? r.stdout.split('\t')[0]?.trim() : '';
  return Boolean(sha) && (await aheadOf(repo, sha!, base));
}

export interface PriorWork {
  /** The skip reason of earlier work on a card, or null. */
  check(item: WorkItemDetail): Promise<string | null>;
  /**
   * Of `keys`, those whose `svc/<KEY>` on origin (as this selection reads it) is a commit this clone
   * has never seen: another machine's work, certain without reading the item.
   */
  pushedElsewhere(keys: readonly string[]): Promise<ReadonlySet<string>>;
  /** A new selection starts: origin is read again, beside the selection's listing. */
  fresh(): void;
  /** The invocation is done: a read of origin no card needed is stopped, so svc need not wait for it. */
  close(): void;
}

/** Built once per command invocation; origin is read once per selection (`fresh`). */
export function priorWorkCheck(opts: { stateDir: string; projectKey: string; repo: string; baseRef?: string; warn(line: string): void }): PriorWork {
  const base = opts.baseRef ?? 'HEAD';
  let runs: Map<string, string> | null = null;
  let origin: Promise<OriginRead> | null = null;
  let warned = false;
  const warnOnce = (line: string) => {
    if (!warned) opts.warn(line);
    warned = true;
  };
  // Stops the reads of origin still under way when the invocation ends (close).
  const reads = new AbortController();
  const start = (): Promise<OriginRead> => {
    // Whether there is an origin at all is asked once per process (hasOrigin), not per selection.
    origin ??= originBranches(opts.repo, hasOrigin(opts.repo), reads.signal);
    return origin;
  };
  // A failure is said by the first card that needs origin: a read asked ahead of an empty listing
  // needs no warning.
  const read = async (): Promise<OriginRead> => {
    const o = await start();
    if (o.failure) warnOnce(o.failure);
    return o;
  };
  return {
    fresh: () => {
      origin = null;
      // Asked beside the selection's listing, not after it: a fleet's worker selects once per card,
      // and each selection then waits for the slower of the two, not for both.
      start().catch(() => {});
    },
    close: () => reads.abort(),
    async pushedElsewhere(keys) {
      if (keys.length === 0) return new Set();
      const { branches, has } = await read();
      const tips = keys.flatMap((k) => branches.get(k) ?? []);
      const known = tips.length > 0 ? await has(tips) : null;
      return new Set(known ? keys.filter((k) => known.get(branches.get(k) ?? '') === false) : []);
    },
    async check(item) {
      const open = item.deliveries.find((d) => d.state === 'open');
      if (open) return `has an open delivery (${open.repo}#${open.number})`;
      const { branches, has, ahead } = await read();
      const pushed = branches.get(item.key);
      if (pushed) {
        // All the tips in one question: a selection that meets one of them meets several.
        const known = await has([...branches.values()]);
        const seen = known?.get(pushed);
        const aheadOfBase = seen === false ? true : ((await ahead(base))?.has(pushed) ?? (await aheadOf(opts.repo, pushed, base, seen)));
        if (aheadOfBase) return `implemented on origin/${branchFor(item.key)}`;
      }
      runs ??= implementedRuns(opts.stateDir, opts.projectKey);
      const runId = runs.get(item.key);
      if (!runId) return null;
      const local = await git(opts.repo, ['rev-parse', '--verify', '--quiet', `refs/heads/${branchFor(item.key)}^{commit}`]);
      if (!local.ok || !(await aheadOf(opts.repo, local.stdout.trim(), base, true))) return null;
      return `implemented in run ${runId} on ${branchFor(item.key)}`;
    },
  };
}
