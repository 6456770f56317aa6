// `copy:`: untracked files of the user's checkout (`.env*`) copied into each leg's folder, and kept
// out of every commit. The patterns are the trusted workflow's (the base commit's). svc reads the
// files from the checkout (the user's, which no agent can write) as the checkout's owner and
// through no link, and writes them into the leg's folder as the leg's user (`sh` reading the bytes
// from a pipe), so root never writes through a path an agent could have replaced with a symlink. Without an agent user
// (svc's own worktree) svc writes them itself, refusing any link on the way and any file already
// there. An agent's git sees them as ignored (an excludes file through GIT_CONFIG_*, see
// exclusionEnv), and copies still untracked and not ignored by the repository are removed before
// svc collects the leg's work, so no commit of svc's can carry one.
import { askOnce } from '../git/run-git.js';
import { lastLine, run, runOk, runRaw } from '../process/run.js';
import {
  chmodSync,
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** Where a step or copy runs: the leg's folder, as the leg's user, with the agent's environment. */
export interface StepPlace {
  cwd: string;
  /** The leg's user; null: svc's own (no agent user). */
  user: { uid: number; gid: number } | null;
  /** The agent's environment made from a filtered base (HOME, TMPDIR of the leg with an agent user). */
  env(base: Record<string, string>): Record<string, string>;
  /**
   * With an agent user: writes a new prompt into the leg's prompt file as that user (root wrote the
   * first one before the hand-over, and writes nothing there after it). Without one, the agent
   * runner writes each attempt's prompt itself.
   */
  writePrompt?(text: string): Promise<void>;
  /**
   * Ends every process the leg's uid has before its check (nothing the agent left can answer the
   * check or change the work under it). Absent without an agent user: svc's own uid is not killed.
   */
  quiesce?(): Promise<void>;
  /** The commit checked out where the steps run, read as the leg's user; null when there is none. */
  head?(): Promise<string | null>;
}

const listed = new Map<string, Promise<{ root: string; files: string[] }>>();

/**
 * The untracked files of `checkout` (ignored ones included) that the globs name, relative to its
 * root. Asked of git once per checkout and globs in a process: listing ignored files walks folders
 * such as node_modules, which a run's every leg need not do again.
 */
export function filesToCopy(checkout: string, globs: readonly string[]): Promise<{ root: string; files: string[] }> {
  return askOnce(listed, JSON.stringify([checkout, globs]), () => listFiles(checkout, globs));
}

async function listFiles(checkout: string, globs: readonly string[]): Promise<{ root: string; files: string[] }> {
  const root = (await runOk('git', ['rev-parse', '--show-toplevel'], { cwd: checkout }, 'git rev-parse')).trim();
  if (!globs.length) return { root, files: [] };
  const stdout = await runOk('git', ['ls-files', '-z', '--others', '--', ...globs.map((g) => `:(glob)${g}`)], { cwd: root }, 'git ls-files');
  const files = stdout
    .split('\0')
    .filter(Boolean)
    .filter((f) => {
      try {
        return lstatSync(join(root, f)).isFile();
      } catch {
        return false;
      }
    });
  return { root, files };
}

/** Writes `data` to `rel` under `dir` as svc itself: no symlink followed, nothing overwritten. */
function writeOwn(dir: string, rel: string, data: Buffer, mode: number): void {
  let at = dir;
  for (const part of dirname(rel)
    .split('/')
    .filter((p) => p && p !== '.')) {
    at = join(at, part);
    let stat = null;
    try {
      stat = lstatSync(at);
    } catch {
      mkdirSync(at, { mode: 0o700 });
      continue;
    }
    if (!stat.isDirectory()) throw new Error(`${rel}: ${at} is not a plain folder`);
  }
  const fd = openSync(join(dir, rel), constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, mode);
  try {
    writeSync(fd, data);
  } finally {
    closeSync(fd);
  }
}

/** Writes `data` to `rel` in the leg's folder as the leg's user (noclobber: nothing overwritten). */
async function writeAs(place: StepPlace, rel: string, data: Buffer, mode: number): Promise<void> {
  const script = 'set -C; umask 077; mkdir -p -- "$(dirname -- "$1")" && cat > "$1" && chmod "$2" "$1"';
  const r = await run('sh', ['-c', script, 'svc-copy', rel, mode.toString(8)], {
    cwd: place.cwd,
    user: place.user!,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8' },
    input: data,
  });
  if (r.code !== 0) throw new Error(lastLine(r));
}

/**
 * `rel` of the checkout at `root`, read as the checkout's owner and through no link: root (svc)
 * copies nothing its user could not read (a root-only file in someone's checkout stays there),
 * and a folder on the way that is a link, or a file that became one, is refused.
 */
async function readAsOwner(root: string, rel: string): Promise<{ data: Buffer; mode: number }> {
  let at = root;
  for (const part of dirname(rel)
    .split('/')
    .filter((p) => p && p !== '.')) {
    at = join(at, part);
    if (!lstatSync(at).isDirectory()) throw new Error(`${at} is not a plain folder`);
  }
  const fd = openSync(join(root, rel), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new Error('not a plain file');
    const mode = stat.mode & 0o100 ? 0o700 : 0o600;
    const owner = statSync(root);
    if (process.getuid?.() !== 0 || owner.uid === 0) return { data: readFileSync(fd), mode };
    // svc is root in another user's checkout: the bytes come through `cat` run as that user.
    const r = await runRaw('cat', ['--', rel], { cwd: root, user: { uid: owner.uid, gid: owner.gid } });
    if (r.code !== 0) throw new Error(`its owner cannot read it (${r.stderr.trim().split('\n').pop() || 'cat failed'})`);
    const stdout = r.stdout;
    return { data: stdout, mode };
  } finally {
    closeSync(fd);
  }
}

/** Copies `files` from `root` into the leg's folder; returns the lines to log (one per file). */
export async function copyFiles(place: StepPlace, root: string, files: readonly string[]): Promise<{ copied: string[]; lines: string[] }> {
  const copied: string[] = [];
  const lines: string[] = [];
  for (const rel of files) {
    try {
      const { data, mode } = await readAsOwner(root, rel);
      if (place.user) await writeAs(place, rel, data, mode);
      else writeOwn(place.cwd, rel, data, mode);
      copied.push(rel);
      lines.push(`copied ${rel}`);
    } catch (error) {
      const why = (error as NodeJS.ErrnoException).code === 'EEXIST' ? 'it is already there' : (error as Error).message;
      lines.push(`not copied ${rel}: ${why}`);
    }
  }
  return { copied, lines };
}

/** The user's own global excludes file, whose rules the leg's excludes file keeps. */
function globalExcludes(env: Record<string, string | undefined>): string {
  const home = env.HOME ?? homedir();
  for (const file of [join(env.XDG_CONFIG_HOME ?? join(home, '.config'), 'git', 'ignore')]) {
    try {
      return readFileSync(file, 'utf8');
    } catch {
      // none
    }
  }
  return '';
}

/**
 * The environment that makes git ignore the copies in the leg (for the agent and the steps): an
 * excludes file svc owns, readable by the leg's user, named through GIT_CONFIG_*. `dispose` removes it.
 */
export function exclusionEnv(copied: readonly string[], env: Record<string, string | undefined>): { env: Record<string, string>; dispose(): void } {
  if (!copied.length) return { env: {}, dispose() {} };
  const dir = mkdtempSync(join(tmpdir(), 'svc-exclude-'));
  const file = join(dir, 'exclude');
  const patterns = copied.map((f) => `/${f.replace(/([\\*?[\]!# ])/g, '\\$1')}`);
  writeFileSync(file, `${globalExcludes(env)}\n# copied by svc (.svc/workflow.yml copy:)\n${patterns.join('\n')}\n`, { mode: 0o644 });
  // mkdtemp makes 0700: the leg's user must reach the file (it holds file names, no contents).
  chmodSync(dir, 0o711);
  return {
    env: { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'core.excludesFile', GIT_CONFIG_VALUE_0: file },
    dispose: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/**
 * Removes the copies that are still untracked and not ignored by the repository's own rules, as
 * the leg's user, before svc collects the leg's work (whose snapshot adds untracked files).
 */
export async function removeCopies(place: StepPlace, copied: readonly string[]): Promise<void> {
  if (!copied.length) return;
  const env = place.env({ PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8', GIT_TERMINAL_PROMPT: '0' });
  const as = place.user ? { user: place.user } : {};
  const literal = copied.map((f) => `:(literal)${f}`);
  const listed = await run('git', ['ls-files', '-z', '--others', '--exclude-standard', '--', ...literal], { cwd: place.cwd, env, ...as });
  const stray = listed.code === 0 ? listed.stdout.split('\0').filter(Boolean) : [];
  if (stray.length) await runOk('rm', ['-f', '--', ...stray], { cwd: place.cwd, env, ...as });
}
