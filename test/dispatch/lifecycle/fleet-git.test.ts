// A fleet's worker (`auto --per-run 1 --push`, docs/fleets.md) on a 2-core machine is bound by its
// CPU, and each git process svc starts is a fork of svc and a git start-up: what one card of it
// costs is counted here, by a `git` on PATH that writes down each call (support/git-log.ts; the
// agent's commit is counted too).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { pushToOrigin } from '../../../src/dispatch/git/delivery.js';
import { runDispatch } from '../../../src/dispatch/lifecycle/dispatch.js';
import { commitOnRemoteOnly, copyRepoWithOrigin, refOf } from '../../support/git-remote.js';
import { startHarness, type Harness } from '../../support/engine.js';
import { loggingGit, type GitLog } from '../../support/git-log.js';

const CARDS = 4;
let h: Harness;
let origin: string;
let log: GitLog;
const path = process.env.PATH;

beforeEach(async () => {
  const pair = await copyRepoWithOrigin();
  origin = pair.origin;
  h = await startHarness({ repo: pair.repo });
  log = loggingGit();
  process.env.PATH = `${log.bin}:${path}`;
});
afterEach(async () => {
  vi.restoreAllMocks();
  process.env.PATH = path;
  await h.close();
});

/** The git subcommand of each logged call (past `-c name=value` and `-C dir`). */
function subcommands(): string[] {
  return log.calls().map((line) => {
    const words = line.split(' ');
    let i = 0;
    while (words[i] === '-c' || words[i] === '-C') i += 2;
    return words[i] ?? '';
  });
}

describe("a fleet worker's git processes per card", () => {
  it('two reads of origin (its selection, and the one after the open), one of each step of the leg, the remote asked once', async () => {
    const keys = Array.from({ length: CARDS }, (_, i) => h.item('task', `leaf ${i + 1}`));
    const s = await runDispatch(h.opts({ command: 'auto', perRun: 1, push: true, env: { PATH: process.env.PATH } }), h.deps({ pushBranch: pushToOrigin }));
    expect(s.legs.map((l) => l.disposition)).toEqual(Array(CARDS).fill('implemented'));
    const counts = new Map<string, number>();
    for (const sub of subcommands()) counts.set(sub, (counts.get(sub) ?? 0) + 1);
    // Per card: the selection's `ls-remote` of svc/* (the "is more ready?" check before a run
    // closes is the next round's selection) and the card's own after its run opened; its worktree;
    // the protected paths' two diffs, the files' and the commit's (no list of untracked files: no
    // protected folder exists); the push; the agent's commit. The "no changes" rule reads the
    // agent's commit from git's files. One read of svc/* more: the last check's, asked beside a
    // listing that has nothing left, and stopped at the end (it may be stopped before git starts).
    expect([2 * CARDS, 2 * CARDS + 1]).toContain(counts.get('ls-remote'));
    counts.delete('ls-remote');
    expect(Object.fromEntries(counts)).toEqual({
      worktree: CARDS,
      diff: 2 * CARDS,
      push: CARDS,
      commit: CARDS,
      remote: 1,
      // Where the worktrees go, once per repository.
      'rev-parse': 1,
    });
    for (const k of keys) expect(await refOf(origin, `refs/heads/svc/${k}`)).not.toBeNull();
  });

  it("a reselection after a 409 reads origin and the ready list no more: the selection's reads of a moment ago stand", async () => {
    const held = Array.from({ length: 3 }, (_, i) => h.item('task', `held ${i + 1}`));
    const free = [h.item('task', 'free 1'), h.item('task', 'free 2')];
    // Another machine's live run holds the first three, where every round starts (random 0).
    await h.service.openDispatchRun({ projectKey: h.svc.projectKey, command: 'batch', idempotencyKey: 'other', cards: held.map((k) => ({ workItemKey: k })) });
    vi.spyOn(Math, 'random').mockReturnValue(0);
    const deps = h.deps({ pushBranch: pushToOrigin });
    const listings = vi.spyOn(deps.service, 'listWorkItems');
    const s = await runDispatch(h.opts({ command: 'auto', perRun: 1, push: true, env: { PATH: process.env.PATH } }), deps);
    expect(s.legs.map((l) => [l.key, l.disposition])).toEqual(free.map((k) => [k, 'implemented']));
    expect(h.seen.filter((l) => /: reselecting without /.test(l))).toHaveLength(3);
    // Nor the ready list: the first round's listing, and each "is more ready?" check's.
    expect(listings).toHaveBeenCalledTimes(3);
    const reads = log.calls().filter((line) => line.startsWith('ls-remote'));
    // Two selections (the first round's, and the second's made by the first's "is more ready?"
    // check), the second's check (asked beside a listing with nothing left, and stopped, perhaps
    // before git started), and each card's own branch after its open.
    expect([2, 3]).toContain(reads.filter((line) => line.endsWith('refs/heads/svc/*')).length);
    expect(reads.filter((line) => !line.endsWith('refs/heads/svc/*'))).toEqual(free.map((k) => `ls-remote --heads origin refs/heads/svc/${k}`));
  });

  it("after the open, the card's own branch on origin is asked beside the item's read, not after it", async () => {
    const key = h.item('task', 'leaf');
    const deps = h.deps({ pushBranch: pushToOrigin });
    const read = deps.service.getWorkItem.bind(deps.service);
    const asked = () => log.calls().includes(`ls-remote --heads origin refs/heads/svc/${key}`);
    let reads = 0;
    // The read after the open (the selection's is the first) answers only once origin was asked:
    // read first and origin after, as before, this leg would never start.
    vi.spyOn(deps.service, 'getWorkItem').mockImplementation(async (k) => {
      if (k === key && ++reads === 2) await vi.waitFor(() => expect(asked()).toBe(true), { timeout: 5000, interval: 10 });
      return read(k);
    });
    const s = await runDispatch(h.opts({ command: 'auto', perRun: 1, push: true, env: { PATH: process.env.PATH } }), deps);
    expect(s.legs.map((l) => [l.key, l.disposition])).toEqual([[key, 'implemented']]);
  });

  it("a selection asks origin's svc/* beside its listing, not after it", async () => {
    const key = h.item('task', 'leaf');
    const deps = h.deps({ pushBranch: pushToOrigin });
    const list = deps.service.listWorkItems.bind(deps.service);
    const asked = () => log.calls().includes('ls-remote --heads origin refs/heads/svc/*');
    // The listing answers only once origin was asked: asked after the listing, as before, no
    // selection would ever answer.
    vi.spyOn(deps.service, 'listWorkItems').mockImplementation(async (project, query) => {
      log.clear();
      await vi.waitFor(() => expect(asked()).toBe(true), { timeout: 5000, interval: 10 });
      return list(project, query);
    });
    const s = await runDispatch(h.opts({ command: 'auto', perRun: 1, push: true, env: { PATH: process.env.PATH } }), deps);
    expect(s.legs.map((l) => [l.key, l.disposition])).toEqual([[key, 'implemented']]);
  });

  it("other machines' work on origin: git's files say this clone lacks their tips, with no git process", async () => {
    const theirs = Array.from({ length: 3 }, (_, i) => h.item('task', `theirs ${i + 1}`));
    const free = [h.item('task', 'free 1'), h.item('task', 'free 2')];
    for (const k of theirs) await commitOnRemoteOnly(origin, `svc/${k}`, `${k}.txt`);
    vi.spyOn(Math, 'random').mockReturnValue(0);
    const s = await runDispatch(h.opts({ command: 'auto', perRun: 1, push: true, env: { PATH: process.env.PATH } }), h.deps({ pushBranch: pushToOrigin }));
    expect(s.legs.map((l) => [l.key, l.disposition])).toEqual(free.map((k) => [k, 'implemented']));
    // Each selection finds their three tips missing from this clone's objects (git/objects.ts) and
    // leaves the three out, unread (docs/fleets.md, "Which card a worker reaches for"): one
    // `cat-file -e` per tip, then one `cat-file --batch-check` per selection, and a read of each
    // item, was what a card another machine implemented cost every selection it met.
    const calls = log.calls();
    const reads = calls.filter((line) => line === 'ls-remote --heads origin refs/heads/svc/*');
    expect(reads).toHaveLength(3);
    expect(calls.filter((line) => line.startsWith('cat-file'))).toEqual([]);
    expect(s.cards.map((c) => c.key)).toEqual(free);
    expect(s.note).toBe('2 run(s)');
  });

  it("where git's files cannot say (objects borrowed from another repository), one git question per selection about all their tips", async () => {
    const theirs = Array.from({ length: 3 }, (_, i) => h.item('task', `theirs ${i + 1}`));
    const free = [h.item('task', 'free 1'), h.item('task', 'free 2')];
    for (const k of theirs) await commitOnRemoteOnly(origin, `svc/${k}`, `${k}.txt`);
    // An alternates file (what `git clone --shared` writes) naming an empty object folder.
    const borrowed = mkdtempSync(join(tmpdir(), 'svc-borrowed-'));
    writeFileSync(join(h.repo, '.git', 'objects', 'info', 'alternates'), `${borrowed}\n`);
    vi.spyOn(Math, 'random').mockReturnValue(0);
    try {
      const s = await runDispatch(h.opts({ command: 'auto', perRun: 1, push: true, env: { PATH: process.env.PATH } }), h.deps({ pushBranch: pushToOrigin }));
      expect(s.legs.map((l) => [l.key, l.disposition])).toEqual(free.map((k) => [k, 'implemented']));
      const calls = log.calls();
      const reads = calls.filter((line) => line === 'ls-remote --heads origin refs/heads/svc/*');
      expect(reads).toHaveLength(3);
      expect(calls.filter((line) => line.startsWith('cat-file'))).toEqual(reads.map(() => 'cat-file --batch-check=%(objecttype)'));
    } finally {
      rmSync(borrowed, { recursive: true, force: true });
    }
  });

  it("this clone's own earlier pushes: one rev-list per selection decides them all, not a merge-base per card per selection", async () => {
    const earlier = Array.from({ length: 3 }, (_, i) => h.item('task', `earlier ${i + 1}`));
    const merged = h.item('task', 'merged into the base');
    const free = h.item('task', 'free');
    // An earlier run of this machine pushed three cards' work; a fourth's branch is already in the base.
    const g = (...args: string[]) => execFileSync('git', args, { cwd: h.repo, encoding: 'utf8' }).trim();
    for (const k of earlier) {
      g('branch', `svc/${k}`);
      g('commit', '-q', '--allow-empty', '-m', `${k}: earlier work`, '--no-verify');
      g('push', '-q', 'origin', `HEAD:refs/heads/svc/${k}`);
      g('reset', '-q', '--hard', 'HEAD~1');
      g('branch', '-D', '-q', `svc/${k}`);
    }
    g('push', '-q', 'origin', `HEAD:refs/heads/svc/${merged}`);
    log.clear();
    const opts = { command: 'auto' as const, perRun: 1, push: true, env: { PATH: process.env.PATH } };
    const s = await runDispatch(h.opts(opts), h.deps({ pushBranch: pushToOrigin }));
    expect(s.legs.map((l) => l.key).sort()).toEqual([merged, free].sort());
    const calls = log.calls();
    const selections = calls.filter((line) => line === 'ls-remote --heads origin refs/heads/svc/*').length;
    expect(selections).toBeGreaterThanOrEqual(2);
    // The one merge-base left is the merged card's own check after its open (its branch was on origin).
    expect(calls.filter((line) => line.startsWith('merge-base'))).toHaveLength(1);
    // At most one rev-list a selection (one that runs a card before it meets an earlier one asks none).
    const revLists = calls.filter((line) => line.startsWith('rev-list --stdin')).length;
    expect(revLists).toBeGreaterThanOrEqual(1);
    expect(revLists).toBeLessThanOrEqual(selections);
    // Each is skipped for the right reason, the two just run as the three before them.
    const dry = await runDispatch(h.opts({ ...opts, dryRun: true }), h.deps());
    expect(dry.cards.map((c) => [c.key, c.skipReason]).sort()).toEqual([...earlier, merged, free].map((k) => [k, `implemented on origin/svc/${k}`]).sort());
  });

  it('a backlog all done on origin by others: no run, the note counts them, and a dry run lists each with its reason', async () => {
    const theirs = Array.from({ length: 3 }, (_, i) => h.item('task', `theirs ${i + 1}`));
    for (const k of theirs) await commitOnRemoteOnly(origin, `svc/${k}`, `${k}.txt`);
    const opts = { command: 'auto' as const, perRun: 1, push: true, env: { PATH: process.env.PATH } };
    const s = await runDispatch(h.opts(opts), h.deps({ pushBranch: pushToOrigin }));
    expect([s.runId, s.legs, s.note]).toEqual([null, [], 'no ready leaves left to run: 3 skipped (--dry-run shows why; --rerun picks work already done)']);
    const dry = await runDispatch(h.opts({ ...opts, dryRun: true }), h.deps());
    expect(dry.cards.map((c) => [c.key, c.skipReason]).sort()).toEqual(theirs.map((k) => [k, `implemented on origin/svc/${k}`]));
  });
});
