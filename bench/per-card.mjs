// 2. Per-card overhead: `svc run` over 100 cards with a no-op agent (`true`, --allow-empty) and a
// worktree per card, against the local service, beside a shell loop doing the same `git worktree
// add` and agent per card. A card's cycle is the time from one card's `running` event to the
// next's (svc's journal stamps each event when it happens); the loop stamps each iteration with
// bash's $EPOCHREALTIME (no extra process). Overhead = median svc cycle − median loop cycle.
import { chmodSync, existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { git, journalOf, makeRepo, median, ms, row, runSvc, startService, summaryOf, svcEnv, tempDir, timed } from './lib.mjs';

const CARDS = 100;

/**
 * The shell loop: the same branch, worktree folder and agent per card, nothing else. With
 * `boundary`, each card's agent runs as the boundary's steps frame it (./src/dispatch/agent/
 * leg-shell.ts): the agent's repository written (one mkdir, the rest the shell's own printf), then
 * in one shell the checkout beside the read of origin's refs, the agent, the status, and the folder
 * emptied: the floor of those steps, without svc's own work around them.
 */
function shellLoop(keys, { boundary = false } = {}) {
  const repo = makeRepo();
  const gitDir = git(repo, 'rev-parse', '--absolute-git-dir');
  const root = join(gitDir, 'svc-worktrees');
  const script = join(tempDir('loop'), 'loop.sh');
  const agent = boundary
    ? `L="${tempDir('legs')}/$k" W="${tempDir('legs')}/$k/work"
  mkdir -p "$W/.git/objects/info" "$W/.git/refs/remotes/origin" "$L/home" "$L/tmp"
  printf 'ref: refs/heads/svc/%s\\n' "$k" > "$W/.git/HEAD"
  printf '[core]\\n\\trepositoryformatversion = 0\\n[remote "origin"]\\n\\turl = %s\\n\\tfetch = +refs/heads/*:refs/remotes/origin/*\\n' "${gitDir}" > "$W/.git/config"
  printf '%s/objects\\n' "${gitDir}" > "$W/.git/objects/info/alternates"
  printf '# pack-refs with: sorted \\n%s refs/heads/svc/%s\\n' "$HEAD_SHA" "$k" > "$W/.git/packed-refs"
  sh -c 'cd "$1" && { git read-tree -u --reset HEAD & rt=$!; refs=$(git --git-dir="$2" for-each-ref --format="%(objectname) %(refname)" refs/heads refs/tags); wait $rt; } && printf "%s\\n" "$refs" >> .git/packed-refs && "$TRUE_BIN" && git status --porcelain=v2 --branch --untracked-files=all >/dev/null && cd / && find "$3" -mindepth 1 -delete && rmdir "$3"' sh "$W" "${gitDir}" "$L"`
    : `(cd "${root}/$k" && "$TRUE_BIN")`;
  writeFileSync(
    script,
    `set -e
mkdir -p "${root}"
echo "$EPOCHREALTIME"
for k in ${keys.join(' ')}; do
  git worktree add -q -b "svc/$k" "${root}/$k" HEAD
  ${agent}
  echo "$EPOCHREALTIME"
done
`,
  );
  // The program `true`, as svc spawns it (bash's builtin would cost nothing).
  const trueBin = ['/usr/bin/true', '/bin/true'].find((p) => existsSync(p));
  const r = timed('bash', [script], { cwd: repo, env: { ...process.env, TRUE_BIN: trueBin, HEAD_SHA: git(repo, 'rev-parse', 'HEAD') } });
  if (r.status !== 0) throw new Error(`shell loop failed: ${r.stderr}`);
  const stamps = r.stdout
    .trim()
    .split('\n')
    .map((s) => Number(s.replace(',', '.')) * 1000);
  return { cycles: stamps.slice(1).map((t, i) => t - stamps[i]), wallMs: r.wallMs };
}

export async function perCard() {
  const service = await startService();
  try {
    const keys = [];
    for (let i = 1; i <= CARDS; i++) {
      keys.push(service.admin.createWorkItem({ projectKey: service.projectKey, kind: 'task', type: 'code', title: `Card ${i}` }).key);
    }
    const before = shellLoop(keys);
    const repo = makeRepo();
    const env = svcEnv(service);
    const r = await runSvc(['run', ...keys, '--agent-cmd', 'true', '--allow-empty', '--repo', repo, '--json'], { env });
    const summary = summaryOf(r);
    if (summary.status !== 'succeeded' || summary.legs.length !== CARDS) {
      throw new Error(`svc run ended ${summary.status} with ${summary.legs.length} legs: ${r.stderr.slice(-1000)}`);
    }
    const after = shellLoop(keys);
    const worktrees = readdirSync(join(git(repo, 'rev-parse', '--absolute-git-dir'), 'svc-worktrees')).length;

    const running = journalOf(env, summary.runId)
      .filter(({ r: rec }) => rec.t === 'ev' && rec.ev.disposition === 'running')
      .map(({ r: rec }) => Date.parse(rec.at));
    const svcCycles = running.slice(1).map((t, i) => t - running[i]);
    const loopCycles = [...before.cycles, ...after.cycles];
    const overhead = median(svcCycles) - median(loopCycles);
    const boundary = process.getuid?.() === 0 ? await boundaryCycle(service) : null;
    const loopWall = (before.wallMs + after.wallMs) / 2;
    return [
      row(
        `per-card overhead beyond git worktree add + agent (median of ${svcCycles.length})`,
        `${ms(overhead)} (svc ${ms(median(svcCycles))} vs loop ${ms(median(loopCycles))} per card)`,
        '≤ 15 ms',
        overhead <= 15,
      ),
      row(
        `whole run: svc run ${CARDS} cards vs the shell loop`,
        `${(r.wallMs / 1000).toFixed(2)} s vs ${(loopWall / 1000).toFixed(2)} s (+${ms((r.wallMs - loopWall) / CARDS)}/card)`,
        'context',
        null,
        'includes svc start-up, open and close',
      ),
      ...(boundary === null
        ? []
        : [
            row(
              `per-leg cost as root through the agent-user boundary vs --agent-user none (medians of ${boundary.n} each, alternating runs)`,
              `${(boundary.through / boundary.none).toFixed(2)}× (${ms(boundary.through)} vs ${ms(boundary.none)} per leg)`,
              '≤ 1.5×',
              boundary.through / boundary.none <= 1.5,
              'a uid leased per leg, its own clone, its branch fetched back, its processes killed (docs/trust.md)',
            ),
            row(
              "the floor of that design: its steps alone (worktree add, then the agent's repository written, checkout and origin's refs, agent, status, folder emptied) in a shell loop vs worktree add + agent",
              `${(boundary.floorThrough / boundary.floorNone).toFixed(2)}× (${ms(boundary.floorThrough)} vs ${ms(boundary.floorNone)} per leg)`,
              'context',
              null,
              'no svc code in either loop: what a worktree plus a private clone per leg costs at least',
            ),
          ]),
      row(
        'worktrees and legs implemented',
        `${worktrees} / ${summary.legs.filter((l) => l.disposition === 'implemented').length}`,
        `${CARDS} / ${CARDS}`,
        worktrees === CARDS && summary.legs.every((l) => l.disposition === 'implemented'),
      ),
    ];
  } finally {
    await service.close();
  }
}

/**
 * As root, svc's default (each agent as a uid of its pool in a clone of its own) against the same
 * run with `--agent-user none`, in alternating runs of 20 cards, so load drifts hit both alike.
 */
async function boundaryCycle(service) {
  const trueBin = ['/usr/bin/true', '/bin/true'].find((p) => existsSync(p));
  const cycles = { through: [], none: [] };
  for (let round = 0; round < 4; round++) {
    const through = round % 2 === 1;
    const keys = [];
    for (let i = 1; i <= 20; i++)
      keys.push(service.admin.createWorkItem({ projectKey: service.projectKey, kind: 'task', type: 'code', title: `Boundary ${round}.${i}` }).key);
    // The same network on both sides: as root svc fences a pool leg by default and leaves a leg of
    // its own uid open, and the fence's own per-leg cost is a row of its own (7, bench/fence.mjs).
    // This row is the uid boundary alone.
    const env = svcEnv(service, { SVC_NETWORK: 'open' });
    if (through) delete env.SVC_AGENT_USER;
    else env.SVC_AGENT_USER = 'none';
    // A checkout as CI and container images make them (0755): the agent user clones it --shared.
    const repo = makeRepo();
    chmodSync(repo, 0o755);
    const r = await runSvc(['run', ...keys, '--agent-cmd', trueBin, '--allow-empty', '--repo', repo, '--json'], { env });
    const summary = summaryOf(r);
    if (summary.status !== 'succeeded')
      throw new Error(`svc run ${through ? 'through the boundary' : 'with --agent-user none'} ended ${summary.status}: ${r.stderr.slice(-1000)}`);
    const running = journalOf(env, summary.runId)
      .filter(({ r: rec }) => rec.t === 'ev' && rec.ev.disposition === 'running')
      .map(({ r: rec }) => Date.parse(rec.at));
    cycles[through ? 'through' : 'none'].push(...running.slice(1).map((t, i) => t - running[i]));
  }
  // The floor: the boundary's git steps alone against the same loop without them, alternating too.
  const floor = { through: [], none: [] };
  for (let round = 0; round < 4; round++) {
    const through = round % 2 === 1;
    const keys = Array.from({ length: 20 }, (_, i) => `F${round}-${i}`);
    floor[through ? 'through' : 'none'].push(...shellLoop(keys, { boundary: through }).cycles);
  }
  return {
    through: median(cycles.through),
    none: median(cycles.none),
    n: cycles.through.length,
    floorThrough: median(floor.through),
    floorNone: median(floor.none),
  };
}
