// One temporary folder per run of the tests or the benchmarks (test/support/run-tmp.ts, bench/run.mjs).
// TMPDIR points into it for the run and every process the run starts, so os.tmpdir(), mkdtemp, mktemp
// and what svc itself makes there (legs roots, runner logs) land inside, and the folder goes when the
// run ends, passed, failed or interrupted. A test that forgets a folder no longer fills the machine's
// temp folder: thousands of entries per `npm test` did, and a crowded /tmp slows every file made there.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, realpathSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** `svc-test-run-…`, `svc-bench-run-…`: a run's folder in the machine's temp folder. */
export const runTmpPrefix = (kind) => `svc-${kind}-run-`;
const KINDS = ['test', 'bench'];
/** In each run's folder: the pid and start time of the process that made it. */
export const RUN_TMP_OWNER = 'svc-run-owner';

/** A process's start time (clock ticks since boot, /proc/PID/stat field 22); null when it is gone. */
function startOf(pid) {
  try {
    // After the command's name in parentheses, which may itself hold ") ".
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

/** Mount points at or below `path` (a test's tmpfs), deepest first; none where /proc is not there. */
function mountsUnder(path) {
  let table = '';
  let dir;
  try {
    table = readFileSync('/proc/self/mountinfo', 'utf8');
    dir = realpathSync(path);
  } catch {
    return [];
  }
  // Field 5 is the mount point, with space, tab, newline and backslash escaped in octal.
  const points = table.split('\n').map((line) => line.split(' ')[4]?.replace(/\\([0-7]{3})/g, (_, o) => String.fromCharCode(Number.parseInt(o, 8))));
  return points.filter((p) => p === dir || p?.startsWith(`${dir}/`)).sort((a, b) => b.length - a.length);
}

/** Whether the process that wrote `pid start` still runs (where /proc is missing: whether the pid does). */
function isLive(pid, start) {
  if (start !== 'null') return startOf(pid) === start;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

/**
 * Removes `dir` as `rm -rf` does: a link inside is removed, never followed. GNU rm walks the tree by
 * descriptors (fts, openat with O_NOFOLLOW), so an agent user's process swapping a folder for a
 * link while root removes it cannot point the removal elsewhere, which a walk by path could. A
 * mount left inside (a test's tmpfs still in use) is detached lazily first, and rm stays on this
 * file system: it never empties what a mount showed there. Retried: a process still running (a
 * test's svc server) may add an entry between the reads. Returns the complaint when it could not go.
 */
export function removeTree(dir) {
  let r;
  for (let i = 0; i < 3; i++) {
    for (const point of mountsUnder(dir)) spawnSync('umount', ['-l', point]);
    r = spawnSync('rm', ['-rf', '--one-file-system', '--', dir], { encoding: 'utf8' });
    if (r.status === 0) return null;
  }
  return (r.error?.message ?? r.stderr).trim().split('\n').pop();
}

/** Folders of earlier runs killed before they could remove theirs (SIGKILL, a crash): their owner is gone. */
function sweepStale(base) {
  let names;
  try {
    names = readdirSync(base);
  } catch {
    return;
  }
  for (const name of names) {
    if (!KINDS.some((kind) => name.startsWith(runTmpPrefix(kind)))) continue;
    let owner;
    try {
      owner = readFileSync(join(base, name, RUN_TMP_OWNER), 'utf8')
        .trim()
        .split(' ');
    } catch {
      continue; // Not ours, or a run that has just made it and not yet written its owner.
    }
    const [pid, start] = owner;
    if (/^[1-9]\d*$/.test(pid ?? '') && !isLive(Number(pid), start)) removeTree(join(base, name));
  }
}

/**
 * Makes this run's folder in the current temp folder and points TMPDIR (this process's, inherited by
 * every child it starts afterwards) at it. `close()` removes it and is idempotent; it also runs when
 * the process exits, since vitest ends on Ctrl-C with process.exit and never calls its teardown.
 * A folder that cannot be removed is reported on stderr in one line, never an error of the run.
 */
export function openRunTmp(kind) {
  const base = tmpdir();
  const before = process.env.TMPDIR;
  sweepStale(base);
  let dir;
  try {
    dir = mkdtempSync(join(base, runTmpPrefix(kind)));
  } catch (error) {
    throw new Error(`cannot make the run's temp folder in ${base} (TMPDIR): ${error.code ?? error.message}`);
  }
  // 0755, not mkdtemp's 0700: tests as root hand leg folders below it to agent users, who must
  // traverse to them. Unlike the sticky /tmp, only its owner can make or rename entries in it.
  chmodSync(dir, 0o755);
  // Written whole under its name (a rename), so another run's sweep never reads a half-written owner.
  writeFileSync(join(dir, `${RUN_TMP_OWNER}.new`), `${process.pid} ${startOf(process.pid)}\n`);
  renameSync(join(dir, `${RUN_TMP_OWNER}.new`), join(dir, RUN_TMP_OWNER));
  process.env.TMPDIR = dir;
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    process.off('exit', close);
    if (process.env.TMPDIR === dir) {
      if (before === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = before;
    }
    const complaint = removeTree(dir);
    if (complaint) process.stderr.write(`svc: could not remove the run's temp folder ${dir}: ${complaint}\n`);
  };
  process.on('exit', close);
  return { dir, close };
}
