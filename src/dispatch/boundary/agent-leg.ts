// The folder of one agent leg, as prepareAgentLeg (./clone.ts) made it: what the engine does with it
// from the hand-over to the collect, every act inside it as the leg's uid (docs/trust.md).
import { closeSync, mkdirSync, openSync, readFileSync, rmdirSync, rmSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { handOver, legEnded, removeLegDir, removeLegFolder, svcGit, svcSh } from './leg-folder.js';
import { lastLine, run, type Run } from '../process/run.js';
import { CHECKOUT, COLLECT_AND_CLEAR, LEG } from './leg-shell.js';
import { pointAgentRepo, trackingConfig } from './agent-repo.js';
import { killAllOf } from './pool.js';
import type { AgentUser } from './user.js';
import { checkOut, onBranch } from '../git/worktree.js';
import type { PreparedWorktree } from '../ports.js';

export const agentGitEnv = (home: string): Record<string, string> => ({
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: home,
  LANG: 'C.UTF-8',
  GIT_TERMINAL_PROMPT: '0',
  GIT_CONFIG_GLOBAL: join(home, '.gitconfig'),
});

/** Where a leg's folder is and what it holds, as prepareAgentLeg made it. */
export interface LegFolderParts {
  user: AgentUser;
  /** The leg's folder: home, tmp, work and the prompt inside. */
  dir: string;
  /** The repository's common dir (the clone's source). */
  common: string;
  /** Whether the agent user reads the repository's objects (its clone borrows them) or root copied them. */
  shared: boolean;
  /** The agents' settings' variables (copied into its home). */
  extraEnv: Record<string, string>;
  /** svc's private folder for the bundle and the collect's answer, and the leg's name in it. */
  privateDir: string;
  key: string;
}

export interface AgentLeg {
  user: AgentUser;
  /** The agent's working tree: a clone on the card's branch, owned by the agent user. */
  workdir: string;
  /** HOME of the agent: fresh per leg, owned by the agent user. */
  home: string;
  /** Where the prompt is written for the agent (readable by it). */
  promptFile: string;
  /** Where the agent is started: the leg's folder while its clone is still to be made, else the clone. */
  startIn: string;
  /**
   * Points the agent's repository at the card's worktree (its branch, at its commit) and hands the
   * leg's folder over to the agent user. The rest of the folder is made before the worktree is
   * (the two do not need each other), so this comes first of all that follows.
   */
  attach(wt: PreparedWorktree): Promise<void>;
  /**
   * The agent's argv. Where the leg is collected right after this agent (`collectWithAgent`), a
   * shell as the agent user makes the clone if it is not there, runs the agent, and collects the
   * leg itself, through the descriptors of `fds()`; otherwise the clone was made first
   * (`ensureClone`) and the agent starts as it is.
   */
  command(argv: readonly string[]): string[];
  /** The leg ends with this agent (no workflow step follows it): collect it in the agent's own process start. */
  collectWithAgent(): void;
  /** Descriptors 3 and 4 of the agent's process start (svc's files for the collect), or none. */
  fds(): number[];
  /**
   * Makes the clone now, as the agent user, for steps that need it before the agent (a
   * workflow's setup); afterwards `command` leaves the argv as it is. Throws when it cannot.
   */
  ensureClone(): Promise<void>;
  /** After `collect`: false when the agent's clone was never made (the agent did not start). */
  readonly cloneMade: boolean;
  /** The agent's environment: `base` with home, user, temp folders and settings of its own. */
  env(base: Record<string, string>): Record<string, string>;
  /** Writes `content` to `name` in the leg's folder, as the agent user (after the hand-over, root writes nothing there). */
  writeAsAgent(name: string, content: string): Promise<void>;
  /**
   * After the agent: brings `svc/<KEY>` of the clone into the worktree (fast-forward or the
   * agent's rewrite, never over uncommitted changes there), and the agent's uncommitted work as
   * uncommitted work, then kills every process of the uid and empties the leg's folder. With
   * `pin` (the commit its check ran on), the branch comes back at that commit whatever the uid did
   * after the check, and uncommitted work comes only when HEAD is still there. Returns
   * whether anything came. When the work cannot be read, the folder is kept; when it cannot be
   * brought in, its bundle is kept (the error names it).
   */
  collect(opts?: { pin?: string }): Promise<boolean>;
  /** Kills every process of the leg's uid and leaves its folder as it is (before the leg's check). */
  quiesce(): Promise<void>;
  /** HEAD of the agent's clone, read as the agent user; null where it has none. */
  head(): Promise<string | null>;
  /** After a pinned `collect`: where the branch had moved after the check (not collected), or null. */
  readonly movedAfterCheck: string | null;
  /** Kills every process of the leg's uid, empties the folder as that uid, and removes it. */
  dispose(): Promise<void>;
}

export class LegFolder implements AgentLeg {
  readonly user: AgentUser;
  readonly workdir: string;
  readonly home: string;
  readonly promptFile: string;
  private readonly dir: string;
  private readonly tmp: string;
  private readonly common: string;
  private readonly shared: boolean;
  private readonly extraEnv: Record<string, string>;
  private readonly privateDir: string;
  private readonly bundle: string;
  private readonly results: string;
  private bound: PreparedWorktree | null = null;
  private cleared = false;
  /** The clone is still to be made (by the agent user, as its process starts or in ensureClone). */
  private pending: boolean;
  private folded = false;
  private legFds: number[] | null = null;
  #cloneMade = true;
  #movedAfterCheck: string | null = null;

  constructor(p: LegFolderParts) {
    this.user = p.user;
    this.dir = p.dir;
    this.home = join(p.dir, 'home');
    this.tmp = join(p.dir, 'tmp');
    this.workdir = join(p.dir, 'work');
    this.promptFile = join(p.dir, 'prompt.md');
    this.common = p.common;
    this.shared = p.shared;
    this.pending = p.shared;
    this.extraEnv = p.extraEnv;
    this.privateDir = p.privateDir;
    this.bundle = join(p.privateDir, `${p.key}.bundle`);
    this.results = join(p.privateDir, `${p.key}.collect`);
  }

  private wtOf(): PreparedWorktree {
    if (!this.bound) throw new Error("the agent's leg is not attached to its worktree");
    return this.bound;
  }

  private ended(): void {
    if (this.cleared) return;
    this.cleared = true;
    legEnded();
  }

  get startIn() {
    return this.pending ? this.dir : this.workdir;
  }

  async attach(wt: PreparedWorktree): Promise<void> {
    if (this.bound) throw new Error("the agent's leg is attached already");
    try {
      if (this.shared) {
        pointAgentRepo(this.workdir, wt.branch, wt.headBefore);
        handOver(this.dir, this.user);
      } else {
        await checkOut(
          () => svcGit(this.dir, ['-C', this.workdir, 'checkout', '--quiet', '-B', wt.branch, wt.headBefore]),
          () => onBranch(this.workdir, wt.branch),
        );
        const r = await run('chown', ['-R', '--no-dereference', '--', `${this.user.uid}:${this.user.gid}`, this.dir]);
        if (r.code !== 0) throw new Error(`chown: ${r.stderr.trim()}`);
      }
    } catch (error) {
      // By who owns the folder now (a hand-over or a chown may have stopped part-way): the attach's
      // own error is the one thrown, and a folder its uid could not empty is left where it is.
      await removeLegFolder(this.dir).catch(() => undefined);
      this.cleared = true;
      legEnded();
      throw error;
    }
    this.bound = wt;
  }

  get cloneMade() {
    return this.#cloneMade;
  }

  get movedAfterCheck() {
    return this.#movedAfterCheck;
  }

  // The clone is made by the agent user in the same process start as the agent (two forks of
  // node fewer per leg); where a workflow step came first, it was made already.
  command(argv: readonly string[]): string[] {
    if (this.folded) {
      this.pending = false;
      const wt = this.wtOf();
      return [
        '/bin/sh',
        '-c',
        LEG,
        'svc-agent-leg',
        this.workdir,
        this.common,
        wt.branch,
        trackingConfig(wt.branch),
        wt.headBefore,
        this.dir,
        this.tmp,
        ...argv,
      ];
    }
    if (this.pending) throw new Error("the agent's clone is not made: call ensureClone() or collectWithAgent() first");
    return [...argv];
  }

  collectWithAgent(): void {
    this.folded = true;
  }

  fds(): number[] {
    if (!this.folded) return [];
    if (!this.legFds) {
      // svc's own files, opened by svc: the agent never names a path svc would open.
      mkdirSync(this.privateDir, { recursive: true, mode: 0o700 });
      this.legFds = [openSync(this.results, 'w', 0o600), openSync(this.bundle, 'w', 0o600)];
    }
    return this.legFds;
  }

  async writeAsAgent(name: string, content: string): Promise<void> {
    const r = await run('/bin/sh', ['-c', 'cat > "$1"', 'sh', join(this.dir, name)], { user: this.user, env: { PATH: '/usr/bin:/bin' }, input: content });
    if (r.code !== 0) throw new Error(`could not write ${name} as ${this.user.name}: ${lastLine(r)}`);
  }

  async ensureClone(): Promise<void> {
    if (!this.pending) return;
    const wt = this.wtOf();
    const r = await run('/bin/sh', ['-c', CHECKOUT, 'svc-agent-leg', this.workdir, this.common, wt.branch, trackingConfig(wt.branch)], {
      user: this.user,
      env: agentGitEnv(this.home),
    });
    if (r.code !== 0) throw new Error(`could not make the agent's clone as ${this.user.name}: ${lastLine(r)}`);
    this.pending = false;
  }

  env(base: Record<string, string>): Record<string, string> {
    const env: Record<string, string> = { ...base };
    for (const name of ['XDG_RUNTIME_DIR', 'OLDPWD', 'MAIL']) delete env[name];
    return {
      ...env,
      HOME: this.home,
      USER: this.user.name,
      LOGNAME: this.user.name,
      TMPDIR: this.tmp,
      XDG_CONFIG_HOME: join(this.home, '.config'),
      XDG_CACHE_HOME: join(this.home, '.cache'),
      XDG_DATA_HOME: join(this.home, '.local', 'share'),
      XDG_STATE_HOME: join(this.home, '.local', 'state'),
      GIT_TERMINAL_PROMPT: '0',
      // Its own git config (identity, safe.directory), whatever file svc's own environment named.
      GIT_CONFIG_GLOBAL: join(this.home, '.gitconfig'),
      ...this.extraEnv,
      PWD: this.workdir,
    };
  }

  quiesce() {
    return killAllOf(this.user);
  }

  async head(): Promise<string | null> {
    if (this.pending) return null;
    const r = await run('git', ['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], { cwd: this.workdir, user: this.user, env: agentGitEnv(this.home) });
    const sha = r.stdout.trim();
    return r.code === 0 && /^[0-9a-f]{40,64}$/.test(sha) ? sha : null;
  }

  async collect(how: { pin?: string } = {}): Promise<boolean> {
    const wt = this.wtOf();
    let keep = false;
    try {
      let out: string | null = null;
      if (this.legFds) {
        for (const fd of this.legFds) closeSync(fd);
        this.legFds = null;
        // The leg's own shell collected it, unless it was killed first (then its lines end early).
        const said = readFileSync(this.results, 'utf8');
        const done = /^# svc-collected (\d+)$/m.exec(said);
        if (said.includes('# svc-no-clone')) out = said;
        else if (done) {
          if (done[1] !== '0') throw new Error(`reading the agent's work as ${this.user.name}: status ${done[1]}`);
          out = said;
        }
      }
      if (out === null) {
        await mkdir(this.privateDir, { recursive: true, mode: 0o700 });
        const fd = openSync(this.bundle, 'w', 0o600);
        let r: Run;
        try {
          r = await run('/bin/sh', ['-c', COLLECT_AND_CLEAR, 'sh', this.workdir, wt.branch, wt.headBefore, this.dir, this.tmp, how.pin ?? ''], {
            user: this.user,
            env: agentGitEnv(this.home),
            fd3: fd,
          });
        } finally {
          closeSync(fd);
        }
        if (r.code !== 0) throw new Error(`reading the agent's work as ${this.user.name}: ${lastLine(r)}`);
        out = r.stdout;
      }
      try {
        rmdirSync(this.dir);
      } catch {
        // Kept: its emptying failed, and `runs recover` or `worktrees prune` removes it later.
      }
      this.ended();
      if (out.includes('# svc-no-clone')) this.#cloneMade = false;
      const field = (name: string) => new RegExp(`^# svc-${name} ?([0-9a-f]*)$`, 'm').exec(out)?.[1] ?? '';
      const sha = field('sha');
      this.#movedAfterCheck = field('moved') || null;
      const wip = field('wip');
      const moved = /^[0-9a-f]{40,64}$/.test(sha) && sha !== wt.headBefore;
      if (!moved && !wip) return false;
      // Whatever else the bundle holds, only the commits seen above are checked out.
      keep = true;
      const refs = [...(moved ? [`refs/heads/${wt.branch}`] : []), ...(wip ? ['refs/svc/uncommitted'] : [])];
      const fetch = `git -C "$1" -c transfer.fsckObjects=true fetch --quiet --no-tags "$2" ${refs.map((_, i) => `"$${i + 4}"`).join(' ')}`;
      await svcSh(moved ? `${fetch} && git -C "$1" reset --quiet --keep "$3"` : fetch, [wt.path, this.bundle, sha, ...refs]);
      // Uncommitted work shows in the worktree as uncommitted work (review legs, prune and `git
      // status` judge it there); a two-tree read-tree refuses to overwrite local changes.
      if (wip) await svcSh('git -C "$1" read-tree -m -u HEAD "$2" && git -C "$1" reset --quiet', [wt.path, wip]);
      keep = false;
      return true;
    } catch (error) {
      if (keep) throw new Error(`${(error as Error).message} (the agent's work is kept in ${this.bundle})`);
      throw error;
    } finally {
      if (!keep) rmSync(this.bundle, { force: true });
      rmSync(this.results, { force: true });
    }
  }

  async dispose(): Promise<void> {
    if (this.legFds) for (const fd of this.legFds.splice(0)) closeSync(fd);
    this.legFds = null;
    rmSync(this.results, { force: true });
    rmSync(this.bundle, { force: true });
    if (this.cleared) return;
    // Not handed over yet: still root's own folder, which no process of the uid has seen.
    if (!this.bound) rmSync(this.dir, { recursive: true, force: true });
    else await removeLegDir(this.dir, this.user);
    this.ended();
  }
}
