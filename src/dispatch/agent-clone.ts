// A leg of an agent that runs as another user (--agent-user, docs/trust.md): the agent gets a clone
// of its own, owned by that user, on `svc/<KEY>`, a home and a temp folder of its own, and the
// prompt file beside them. It never gets write access to the main repository, svc's state, or the
// broker's socket. After the agent, svc brings the branch back into the card's worktree.
//
// svc (root) never runs git inside the agent's clone: its .git/config is the agent's to write, and
// a `core.fsmonitor`, hook or alias there would run as root (the reason git has safe.directory). So
// whatever git must do in the clone runs as the agent user, and the commits cross over as a bundle
// (plain data, fsck-checked on fetch) that svc fetches into the worktree. No safe.directory entry
// is needed anywhere, and nothing is written to any global git config.
import { chmod, mkdir, mkdtemp, rm, rmdir, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { execa } from 'execa';
import type { AgentUser } from './agent/user.js';
import { checkOut, onBranch, type PreparedWorktree } from './worktree.js';

/** How long a git call as the agent user may take (its config could make it hang). */
const AGENT_GIT_TIMEOUT_MS = 120_000;

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
  /**
   * Brings `svc/<KEY>` of the clone into the worktree (fast-forward or the agent's rewrite, never
   * over uncommitted changes there), and the agent's uncommitted work as uncommitted work. Returns
   * whether anything came.
   */
  collect(): Promise<boolean>;
  /** Removes the leg's folder (after a collect that failed, svc keeps it instead). */
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
}

let agentsRoot: Promise<string> | null = null;

/**
 * One folder per svc process for the agents' legs: root-owned 0711, so an agent reaches its own
 * leg (0700, its own) by path but cannot list or enter another's.
 */
function legsRoot(): Promise<string> {
  agentsRoot ??= (async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-agent-legs-'));
    await chmod(dir, 0o711);
    return dir;
  })();
  agentsRoot.catch(() => (agentsRoot = null));
  return agentsRoot;
}

/**
 * The leg's own folder (0700) in the legs' root. The root goes when its last leg goes (dispose), so
 * a leg that meets a root just removed starts a new one.
 */
async function legDir(key: string): Promise<string> {
  for (let attempt = 0; ; attempt++) {
    const dir = join(await legsRoot(), key);
    // A leftover of an earlier attempt of this process is the agent's; it goes first.
    await rm(dir, { recursive: true, force: true });
    try {
      await mkdir(dir, { mode: 0o700 });
      return dir;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || attempt > 0) throw error;
      agentsRoot = null;
    }
  }
}

/** Where the snapshot of the agent's uncommitted work travels (a ref of the clone, never pushed). */
const WIP_REF = 'refs/svc/uncommitted';
const SNAPSHOT_IDENT = { GIT_AUTHOR_NAME: 'svc', GIT_AUTHOR_EMAIL: 'svc@localhost', GIT_COMMITTER_NAME: 'svc', GIT_COMMITTER_EMAIL: 'svc@localhost' };

const agentGitEnv = (home: string): Record<string, string> => ({ PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, LANG: 'C.UTF-8', GIT_TERMINAL_PROMPT: '0' });

/** git as the agent user: its own rights, its own home, no groups (libuv drops them with uid/gid). */
function asAgent(user: AgentUser, cwd: string, home: string) {
  return (args: string[], extra: Record<string, unknown> = {}) =>
    execa('git', args, {
      cwd,
      uid: user.uid,
      gid: user.gid,
      env: agentGitEnv(home),
      extendEnv: false,
      stdin: 'ignore',
      timeout: AGENT_GIT_TIMEOUT_MS,
      ...extra,
    });
}

const sharedOk = new Map<string, Promise<boolean>>();

/**
 * Whether the agent user can read the repository's object store: then the clone borrows it
 * (`--shared`, no copy); otherwise the objects are copied (`--no-hardlinks`). Asked once per repo.
 */
function canShare(user: AgentUser, objects: string): Promise<boolean> {
  const key = `${user.uid}:${user.gid}:${objects}`;
  let p = sharedOk.get(key);
  if (!p) {
    p = execa('test', ['-r', objects, '-a', '-x', objects, '-a', '-r', join(objects, 'pack'), '-a', '-x', join(objects, 'pack')], {
      uid: user.uid, gid: user.gid, reject: false, stdin: 'ignore', extendEnv: false, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    }).then((r) => r.exitCode === 0, () => false);
    sharedOk.set(key, p);
  }
  return p;
}

async function svcGit(cwd: string, args: string[]): Promise<string> {
  return (await execa('git', args, { cwd, stdin: 'ignore' })).stdout.trim();
}

/** svc's own git identity for the repository, copied into the clone so the agent's commits read as today's. */
async function identityOf(repo: string): Promise<Array<[string, string]>> {
  const out: Array<[string, string]> = [];
  for (const key of ['user.name', 'user.email']) {
    const r = await execa('git', ['config', '--get', key], { cwd: repo, reject: false, stdin: 'ignore' });
    if (r.exitCode === 0 && r.stdout.trim()) out.push([key, r.stdout.trim()]);
  }
  return out;
}

/** Prepares the agent's clone, home and temp folder for one leg. */
export async function prepareAgentLeg(opts: PrepareAgentLegOptions): Promise<AgentLeg> {
  const { user, key, wt } = opts;
  const dir = await legDir(key);
  const home = join(dir, 'home');
  const tmp = join(dir, 'tmp');
  const workdir = join(dir, 'work');
  const promptFile = join(dir, 'prompt.md');
  try {
    await mkdir(home, { mode: 0o700 });
    await mkdir(tmp, { mode: 0o700 });
    const common = await svcGit(opts.repo, ['rev-parse', '--path-format=absolute', '--git-common-dir']);
    const shared = await canShare(user, join(common, 'objects'));
    // Cloned by svc before the agent exists, then handed over: nothing of the agent's is run yet.
    await checkOut(
      // From the repository's git dir: `opts.repo` may be a folder inside the work tree (svc started
      // in a subdirectory), which git clone does not take for a repository.
      () => execa('git', ['clone', '--quiet', shared ? '--shared' : '--no-hardlinks', '--branch', wt.branch, '--', common, workdir], { stdin: 'ignore' }),
      () => onBranch(workdir, wt.branch),
    );
    for (const [k, v] of await identityOf(wt.path)) await svcGit(workdir, ['config', '--local', k, v]);
    // The clone must stand at the worktree's commit (an existing worktree may be ahead of the branch ref).
    if ((await svcGit(workdir, ['rev-parse', 'HEAD'])) !== wt.headBefore) await svcGit(workdir, ['reset', '--quiet', '--hard', wt.headBefore]);
    await execa('chown', ['-R', '--', `${user.uid}:${user.gid}`, dir], { stdin: 'ignore' });
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  const git = asAgent(user, workdir, home);
  const branchRef = `refs/heads/${wt.branch}`;
  /**
   * The agent's uncommitted work (untracked files included, ignored ones not) as a commit on top
   * of its branch, made as the agent through a temporary index; null when there is none, or when
   * the agent left its branch (then only the branch comes back).
   */
  const snapshot = async (sha: string): Promise<string | null> => {
    const on = await git(['symbolic-ref', '--quiet', 'HEAD'], { reject: false });
    if (String(on.stdout).trim() !== branchRef) return null;
    const indexed = { env: { ...agentGitEnv(home), GIT_INDEX_FILE: join(tmp, 'svc-snapshot.index'), ...SNAPSHOT_IDENT } };
    await git(['read-tree', sha], indexed);
    await git(['add', '--all'], indexed);
    const tree = String((await git(['write-tree'], indexed)).stdout).trim();
    if (tree === String((await git(['rev-parse', `${sha}^{tree}`])).stdout).trim()) return null;
    const wip = String((await git(['commit-tree', tree, '-p', sha, '-m', 'svc: uncommitted work of the agent'], indexed)).stdout).trim();
    await git(['update-ref', WIP_REF, wip]);
    return wip;
  };
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
        PWD: workdir,
      };
    },
    async collect() {
      const head = await git(['rev-parse', '--verify', '--quiet', `${branchRef}^{commit}`], { reject: false });
      const sha = String(head.stdout).trim();
      if (head.exitCode !== 0 || !/^[0-9a-f]{40,64}$/.test(sha)) return false;
      const wip = await snapshot(sha);
      if (sha === wt.headBefore && !wip) return false;
      await mkdir(opts.privateDir, { recursive: true, mode: 0o700 });
      const bundle = join(opts.privateDir, `${key}.bundle`);
      const take = async (ref: string, want: string): Promise<void> => {
        await svcGit(wt.path, ['-c', 'transfer.fsckObjects=true', 'fetch', '--quiet', '--no-tags', bundle, ref]);
        const fetched = await svcGit(wt.path, ['rev-parse', 'FETCH_HEAD']);
        if (fetched !== want) throw new Error(`the agent's ${ref} moved while it was collected (${want.slice(0, 12)} → ${fetched.slice(0, 12)})`);
      };
      try {
        // The bundle is written by svc's side of the pipe into svc's own folder: the agent never
        // names a path svc would open.
        await writeFile(bundle, '', { mode: 0o600 });
        const refs = [...(sha !== wt.headBefore ? [branchRef] : []), ...(wip ? [WIP_REF] : [])];
        await git(['bundle', 'create', '--quiet', '-', ...refs, `^${wt.headBefore}`], { stdout: { file: bundle } });
        if (sha !== wt.headBefore) {
          await take(branchRef, sha);
          await svcGit(wt.path, ['reset', '--quiet', '--keep', sha]);
        }
        if (wip) {
          // Uncommitted work shows in the worktree as uncommitted work (review legs, prune and
          // `git status` judge it there); a two-tree read-tree refuses to overwrite local changes.
          await take(WIP_REF, wip);
          await svcGit(wt.path, ['read-tree', '-m', '-u', 'HEAD', wip]);
          await svcGit(wt.path, ['reset', '--quiet']);
        }
        return true;
      } finally {
        await rm(bundle, { force: true });
      }
    },
    async dispose() {
      // Emptied as the agent user (it owns everything in there, symlinks included), so root never
      // walks a tree the agent could still be changing; the empty folder is then svc's to remove.
      await execa('find', [dir, '-mindepth', '1', '-delete'], { uid: user.uid, gid: user.gid, reject: false, stdin: 'ignore', cwd: '/' });
      await rmdir(dir).catch(async () => {
        if ((await stat(dir).catch(() => null))?.isDirectory()) throw new Error(`could not remove ${dir}`);
      });
      // The last leg of this process takes the (then empty) root with it; another leg keeps it.
      const root = dirname(dir);
      await rmdir(root).then(() => {
        if (agentsRoot) void agentsRoot.then((r) => r === root && (agentsRoot = null));
      }, () => undefined);
    },
  };
}
