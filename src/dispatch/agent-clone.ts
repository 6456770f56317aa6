// A leg of an agent that runs as another user (--agent-user, docs/trust.md): the agent gets a clone
// of its own on `svc/<KEY>`, a home and a temp folder of its own, and the prompt file beside them,
// in a folder owned by the leg's uid (leased for this leg alone, ./agent/pool.ts). It never gets
// write access to the main repository, svc's state, or the broker's socket. After the agent, svc
// brings the branch back into the card's worktree.
//
// Root never follows a path the agent could have changed. Everything svc writes into the leg's
// folder (prompt, settings, the clone when the agent user cannot read the repository) is written
// while the folder is still root's and before any process of the leg's uid exists; after the
// hand-over every file-system act inside it runs as the leg's uid. svc (root) never runs git in the
// agent's clone either: its .git/config is the agent's, and a `core.fsmonitor`, hook or alias there
// would run as root (the reason git has safe.directory). The commits cross over as a bundle (plain
// data, fsck-checked on fetch) that svc fetches into the worktree.
import { spawn } from 'node:child_process';
import { chmod, lchown, mkdir, mkdtemp, readdir, rmdir, stat, writeFile } from 'node:fs/promises';
import { closeSync, openSync, readdirSync, rmdirSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { KILL_ALL } from './agent/pool.js';
import { copyAgentSettings } from './agent/settings.js';
import type { AgentUser } from './agent/user.js';
import { selfMark } from './run-lock.js';
import { checkOut, onBranch, type PreparedWorktree } from './worktree.js';

/** How long a git call as the agent user may take (its config could make it hang). */
const AGENT_GIT_TIMEOUT_MS = 120_000;

/** The name of each svc process's legs root in the temp folder (`runs recover` looks for it). */
export const LEGS_ROOT_PREFIX = 'svc-agent-legs-';
/** Inside a legs root: who made it (pid and start time), so cleanup knows a live root from a dead one. */
export const LEGS_OWNER_FILE = 'owner';

export interface AgentLeg {
  user: AgentUser;
  /** The agent's working tree: a clone on the card's branch, owned by the agent user. */
  workdir: string;
  /** HOME of the agent: fresh per leg, owned by the agent user. */
  home: string;
  /** Where the prompt is written for the agent (readable by it). */
  promptFile: string;
  /** The agent's environment: `base` with home, user and temp folders of its own. */
  env(base: Record<string, string>): Record<string, string>;
  /** Writes `content` to `name` in the leg's folder, as the agent user (after the hand-over). */
  writeAsAgent(name: string, content: string): Promise<void>;
  /**
   * Brings `svc/<KEY>` of the clone into the worktree (fast-forward or the agent's rewrite, never
   * over uncommitted changes there), and the agent's uncommitted work as uncommitted work. Returns
   * whether anything came.
   */
  collect(): Promise<boolean>;
  /** Kills every process of the leg's uid, then removes the leg's folder as that uid. */
  dispose(): Promise<void>;
}

export interface PrepareAgentLegOptions {
  user: AgentUser;
  /** The repository the worktree belongs to (the clone's source). */
  repo: string;
  key: string;
  wt: PreparedWorktree;
  /** A folder only svc may open, for the bundle in transit (the run's state folder). */
  privateDir: string;
  /** The prompt, written into the leg's folder before the hand-over. */
  prompt?: string;
  /** Where the agents' settings are copied from: svc's HOME and environment. */
  settingsFrom?: { home: string | undefined; env: Readonly<Record<string, string | undefined>> };
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * A program through node's child_process (about 5 ms of CPU less per process than execa on a
 * 2-core machine). Never rejects; `code` is null when it could not start or was killed.
 * `stdoutFd`, `fd3`: that descriptor of the child goes straight into svc's file. Each start of a
 * process from node costs a fork of node itself, so a leg's steps that belong together run as one
 * shell (`sh -c` with its arguments as positional parameters, never spliced into the script).
 */
function run(file: string, args: string[], opts: { cwd?: string; user?: { uid: number; gid: number }; env?: Record<string, string>; input?: string; stdoutFd?: number; fd3?: number } = {}): Promise<Run> {
  return new Promise((done) => {
    const child = spawn(file, args, {
      cwd: opts.cwd ?? '/',
      timeout: AGENT_GIT_TIMEOUT_MS,
      stdio: ['pipe', opts.stdoutFd ?? 'pipe', 'pipe', ...(opts.fd3 !== undefined ? [opts.fd3] : [])],
      ...(opts.user ? { uid: opts.user.uid, gid: opts.user.gid } : {}),
      ...(opts.env ? { env: opts.env } : {}),
    });
    let stdout = '';
    let stderr = '';
    child.stdout?.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', (error) => done({ code: null, stdout, stderr: stderr || error.message }));
    child.on('close', (code) => done({ code, stdout, stderr }));
    child.stdin?.on('error', () => {});
    child.stdin?.end(opts.input);
  });
}

/** Runs `script` (git commands on its positional parameters) as svc, in one shell; rejects with the last line of complaint. */
async function svcSh(script: string, args: string[]): Promise<void> {
  const r = await run('/bin/sh', ['-c', script, 'sh', ...args], { env: { ...process.env } as Record<string, string> });
  if (r.code !== 0) throw new Error(`git: ${r.stderr.trim().split('\n').pop() || `exit ${r.code}`}`);
}

/** svc's git: rejects with git's first line of complaint. */
async function svcGit(cwd: string, args: string[]): Promise<string> {
  const r = await run('git', args, { cwd });
  if (r.code !== 0) throw new Error(`git ${args[0]}: ${r.stderr.trim().split('\n').pop() || `exit ${r.code}`}`);
  return r.stdout.trim();
}

let agentsRoot: Promise<string> | null = null;
/** The root's path once made: what the synchronous clean-up of the last leg removes. */
let rootPath: string | null = null;
let liveLegs = 0;

/**
 * One folder per svc process for the agents' legs: root-owned 0711, so an agent reaches its own
 * leg (0700, its own) by path but cannot list the others, nor rename or replace any. It names its
 * owner, and goes with the last leg of the process.
 */
function legsRoot(): Promise<string> {
  agentsRoot ??= (async () => {
    const dir = await mkdtemp(join(tmpdir(), LEGS_ROOT_PREFIX));
    await chmod(dir, 0o711);
    writeFileSync(join(dir, LEGS_OWNER_FILE), JSON.stringify(selfMark()), { mode: 0o600 });
    rootPath = dir;
    return dir;
  })();
  agentsRoot.catch(() => (agentsRoot = null));
  return agentsRoot;
}

/** A leg ended: the last one takes the (then empty) root with it, synchronously, so no leg starting now meets half a root. */
function legEnded(): void {
  liveLegs--;
  if (liveLegs > 0 || !rootPath) return;
  const root = rootPath;
  try {
    // A kept clone (its work did not come back) keeps the root; `runs recover` removes it later.
    if (!readdirSync(root).every((name) => name === LEGS_OWNER_FILE)) return;
    unlinkSync(join(root, LEGS_OWNER_FILE));
    rmdirSync(root);
  } catch {
    // Gone already: the next leg makes a new one.
  }
  agentsRoot = null;
  rootPath = null;
}

const commonDirs = new Map<string, Promise<string>>();
const identities = new Map<string, Promise<string[]>>();
const sharedOk = new Map<string, Promise<boolean>>();

/** The repository's git dir, asked once per repository (`repo` may be a folder inside the work tree). */
function commonDirOf(repo: string): Promise<string> {
  let p = commonDirs.get(repo);
  if (!p) {
    p = svcGit(repo, ['rev-parse', '--path-format=absolute', '--git-common-dir']);
    commonDirs.set(repo, p);
    p.catch(() => commonDirs.delete(repo));
  }
  return p;
}

/** svc's git identity for the repository, as `-c` arguments of the clone, so the agent's commits read as today's. */
function identityOf(common: string): Promise<string[]> {
  let p = identities.get(common);
  if (!p) {
    p = run('git', ['config', '--get-regexp', '^user\\.(name|email)$'], { cwd: common }).then((r) =>
      r.stdout.split('\n').filter(Boolean).flatMap((line) => {
        const at = line.indexOf(' ');
        return at > 0 ? ['-c', `${line.slice(0, at)}=${line.slice(at + 1)}`] : [];
      }),
    );
    identities.set(common, p);
  }
  return p;
}

/**
 * Whether the agent user can read the repository's object store: then it clones it itself
 * (`--shared`, no copy, nothing for root to hand over); otherwise root copies the objects
 * (`--no-hardlinks`) and hands the clone over. Asked once per user and repository.
 */
function canShare(user: AgentUser, objects: string): Promise<boolean> {
  const key = `${user.uid}:${user.gid}:${objects}`;
  let p = sharedOk.get(key);
  if (!p) {
    p = run('test', ['-r', objects, '-a', '-x', objects, '-a', '-r', join(objects, 'pack'), '-a', '-x', join(objects, 'pack')], { user, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } }).then((r) => r.code === 0);
    sharedOk.set(key, p);
  }
  return p;
}

/** Where the snapshot of the agent's uncommitted work travels (a ref of the clone, never pushed). */
const WIP_REF = 'refs/svc/uncommitted';
const SNAPSHOT_IDENT = { GIT_AUTHOR_NAME: 'svc', GIT_AUTHOR_EMAIL: 'svc@localhost', GIT_COMMITTER_NAME: 'svc', GIT_COMMITTER_EMAIL: 'svc@localhost' };

const agentGitEnv = (home: string): Record<string, string> => ({ PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, LANG: 'C.UTF-8', GIT_TERMINAL_PROMPT: '0' });

/** Hands what svc made in the leg's folder to the agent user: lchown, never following a link. */
async function handOver(path: string, user: AgentUser): Promise<void> {
  await lchown(path, user.uid, user.gid);
  const st = await stat(path);
  if (!st.isDirectory()) return;
  for (const entry of await readdir(path, { withFileTypes: true })) {
    const child = join(path, entry.name);
    if (entry.isDirectory()) await handOver(child, user);
    else await lchown(child, user.uid, user.gid);
  }
}

/** Prepares the agent's clone, home and temp folder for one leg. */
export async function prepareAgentLeg(opts: PrepareAgentLegOptions): Promise<AgentLeg> {
  const { user, key, wt } = opts;
  liveLegs++;
  let dir: string;
  try {
    dir = await mkdtemp(join(await legsRoot(), `${key}-`));
  } catch (error) {
    legEnded();
    throw error;
  }
  const home = join(dir, 'home');
  const tmp = join(dir, 'tmp');
  const workdir = join(dir, 'work');
  const promptFile = join(dir, 'prompt.md');
  let extraEnv: Record<string, string> = {};
  try {
    const common = await commonDirOf(opts.repo);
    const [identity, shared] = await Promise.all([identityOf(common), canShare(user, join(common, 'objects'))]);
    // Made while the folder is root's and no process of the leg's uid exists: nothing here can be
    // a link the agent planted.
    await mkdir(home, { mode: 0o700 });
    await mkdir(tmp, { mode: 0o700 });
    if (opts.prompt !== undefined) await writeFile(promptFile, opts.prompt, { mode: 0o600, flag: 'wx' });
    if (opts.settingsFrom) extraEnv = await copyAgentSettings(opts.settingsFrom.home, opts.settingsFrom.env, home);
    // The agent user's clone of a repository root owns: git's ownership check is told about it in
    // the agent's own global config (the only config it reads besides the system's).
    if (shared) await writeFile(join(home, '.gitconfig'), `[safe]\n\tdirectory = ${common}\n`, { mode: 0o600, flag: 'wx' });
    const source = shared ? '--shared' : '--no-hardlinks';
    // Straight onto the branch, which stands at the worktree's commit; a review's side branch exists
    // only in its (detached) worktree: then the clone is checked out with `-B` at that commit.
    const straight = ['clone', '--quiet', ...identity, source, '--branch', wt.branch, '--', common, workdir];
    const detached = [
      ['clone', '--quiet', '--no-checkout', ...identity, source, '--', common, workdir],
      ['-C', workdir, 'checkout', '--quiet', '-B', wt.branch, wt.headBefore],
    ];
    if (shared) {
      await handOver(dir, user);
      const env = agentGitEnv(home);
      const first = await run('git', straight, { user, env });
      if (first.code !== 0) {
        if (!/not found in upstream|Remote branch .* not found/.test(first.stderr)) throw new Error(`git clone as ${user.name}: ${first.stderr.trim().split('\n').pop()}`);
        for (const args of detached) {
          const r = await run('git', args, { user, env });
          if (r.code !== 0) throw new Error(`git ${args.includes('clone') ? 'clone' : 'checkout'} as ${user.name}: ${r.stderr.trim().split('\n').pop()}`);
        }
      }
    } else {
      // The agent user cannot read the objects: root makes the copy, before the hand-over.
      await svcGit(dirname(workdir), detached[0]!);
      await checkOut(() => svcGit(dirname(workdir), detached[1]!), () => onBranch(workdir, wt.branch));
      const r = await run('chown', ['-R', '--no-dereference', '--', `${user.uid}:${user.gid}`, dir]);
      if (r.code !== 0) throw new Error(`chown: ${r.stderr.trim()}`);
    }
  } catch (error) {
    await removeLegDir(dir, user, false);
    legEnded();
    throw error;
  }
  const gitAs = (args: string[], extra: { env?: Record<string, string>; stdoutFd?: number } = {}) =>
    run('git', ['-C', workdir, ...args], { user, env: extra.env ?? agentGitEnv(home), ...(extra.stdoutFd !== undefined ? { stdoutFd: extra.stdoutFd } : {}) });
  const branchRef = `refs/heads/${wt.branch}`;
  let disposed = false;
  return {
    user,
    workdir,
    home,
    promptFile,
    env(base) {
      const env: Record<string, string> = { ...base };
      for (const name of ['XDG_RUNTIME_DIR', 'OLDPWD', 'MAIL']) delete env[name];
      return {
        ...env,
        HOME: home,
        USER: user.name,
        LOGNAME: user.name,
        TMPDIR: tmp,
        XDG_CONFIG_HOME: join(home, '.config'),
        XDG_CACHE_HOME: join(home, '.cache'),
        XDG_DATA_HOME: join(home, '.local', 'share'),
        XDG_STATE_HOME: join(home, '.local', 'state'),
        ...extraEnv,
        PWD: workdir,
      };
    },
    async writeAsAgent(name, content) {
      const r = await run('/bin/sh', ['-c', 'cat > "$1"', 'sh', join(dir, name)], { user, env: { PATH: '/usr/bin:/bin' }, input: content });
      if (r.code !== 0) throw new Error(`could not write ${name} as ${user.name}: ${r.stderr.trim()}`);
    },
    async collect() {
      await mkdir(opts.privateDir, { recursive: true, mode: 0o700 });
      const bundle = join(opts.privateDir, `${key}.bundle`);
      try {
        // One shell as the leg's uid: first nothing of the agent's may run on (it could move its
        // branch while it is read), then one status says where HEAD is, on which branch, and what is
        // uncommitted, and a bundle of the branch beyond the starting commit goes to svc's file on
        // descriptor 3 (svc opened it; the agent never names a path svc would open). An empty
        // bundle (nothing committed) is refused by git: the marker line says so.
        const fd = openSync(bundle, 'w', 0o600);
        let first: Run;
        try {
          first = await run('/bin/sh', ['-c', `${KILL_ALL}; git -C "$1" status --porcelain=v2 --branch --untracked-files=all || exit 90; git -C "$1" bundle create --quiet - "$2" "^$3" >&3 2>/dev/null; echo "# svc-bundle $?"`, 'sh', workdir, branchRef, wt.headBefore], { user, env: agentGitEnv(home), fd3: fd });
        } finally {
          closeSync(fd);
        }
        if (first.code !== 0) throw new Error(`git status as ${user.name}: ${first.stderr.trim().split('\n').pop()}`);
        const lines = first.stdout.split('\n').filter(Boolean);
        const onIt = lines.includes(`# branch.head ${wt.branch}`);
        const dirty = lines.some((l) => !l.startsWith('# '));
        const bundled = lines.includes('# svc-bundle 0');
        let sha = onIt ? /^# branch\.oid ([0-9a-f]{40,64})$/m.exec(first.stdout)?.[1] : undefined;
        if (!onIt) {
          const head = await gitAs(['rev-parse', '--verify', '--quiet', `${branchRef}^{commit}`]);
          sha = head.code === 0 ? head.stdout.trim() : undefined;
        }
        if (!sha || !/^[0-9a-f]{40,64}$/.test(sha)) return false;
        // Uncommitted work (untracked files included, ignored ones not) as a commit on top of the
        // branch, made as the agent through a temporary index; only while the agent is on its branch.
        let wip: string | null = null;
        if (onIt && dirty) {
          const env = { ...agentGitEnv(home), GIT_INDEX_FILE: join(tmp, 'svc-snapshot.index'), ...SNAPSHOT_IDENT };
          for (const args of [['read-tree', sha], ['add', '--all']]) await gitAs(args, { env });
          const tree = (await gitAs(['write-tree'], { env })).stdout.trim();
          const made = (await gitAs(['commit-tree', tree, '-p', sha, '-m', 'svc: uncommitted work of the agent'], { env })).stdout.trim();
          if (/^[0-9a-f]{40,64}$/.test(made) && (await gitAs(['update-ref', WIP_REF, made])).code === 0) wip = made;
        }
        const moved = sha !== wt.headBefore;
        if (!moved && !wip) return false;
        const refs = [...(moved ? [branchRef] : []), ...(wip ? [WIP_REF] : [])];
        if (wip || !bundled) {
          const again = openSync(bundle, 'w', 0o600);
          try {
            const made = await gitAs(['bundle', 'create', '--quiet', '-', ...refs, `^${wt.headBefore}`], { stdoutFd: again });
            if (made.code !== 0) throw new Error(`git bundle as ${user.name}: ${made.stderr.trim().split('\n').pop()}`);
          } finally {
            closeSync(again);
          }
        }
        // Whatever the bundle holds, only the commits seen above are checked out (reset to `sha`).
        // Fetch and move in one shell of svc's own, in svc's own worktree.
        const take = moved ? ' && git -C "$1" reset --quiet --keep "$3"' : '';
        await svcSh(`git -C "$1" -c transfer.fsckObjects=true fetch --quiet --no-tags "$2" ${refs.map((_, i) => `"$${i + 4}"`).join(' ')}${take}`, [wt.path, bundle, sha, ...refs]);
        if (wip) {
          // Uncommitted work shows in the worktree as uncommitted work (review legs, prune and
          // `git status` judge it there); a two-tree read-tree refuses to overwrite local changes.
          await svcSh('git -C "$1" read-tree -m -u HEAD "$2" && git -C "$1" reset --quiet', [wt.path, wip]);
        }
        return true;
      } finally {
        rmSync(bundle, { force: true });
      }
    },
    async dispose() {
      if (disposed) return;
      disposed = true;
      await removeLegDir(dir, user);
      legEnded();
    },
  };
}

/**
 * Empties the leg's folder as its uid, in one shell (it owns everything in there, links included,
 * so root never walks a tree the agent made), then removes the empty folder, whose entry is in
 * root's 0711 root. `kill`: every process of the uid is killed first (the leg's own end; never for
 * a dead svc's folder, whose uid may be another live leg's by now).
 */
export async function removeLegDir(dir: string, user: { uid: number; gid: number }, kill = true): Promise<void> {
  await run('/bin/sh', ['-c', `${kill ? `${KILL_ALL}; ` : ''}exec find "$1" -mindepth 1 -delete`, 'sh', dir], { user, env: { PATH: '/usr/bin:/bin' } });
  await rmdir(dir).catch(async () => {
    if ((await stat(dir).catch(() => null))?.isDirectory()) throw new Error(`could not remove ${dir}`);
  });
}
