// A leg of an agent that runs as another user (--agent-user, docs/trust.md): the agent gets a clone
// of its own on `svc/<KEY>`, a home and a temp folder of its own, and the prompt file beside them,
// in a folder owned by the leg's uid (leased for this leg alone, ./pool.ts). It never gets
// write access to the main repository, svc's state, or the broker's socket. After the agent, svc
// brings the branch back into the card's worktree.
//
// Root never follows a path the agent could have changed. Everything svc writes into the leg's
// folder (prompt, git identity, settings, the clone's repository, ./agent-repo.ts, or the whole
// clone when the agent user cannot read the objects) is written while the folder is still root's
// and before any process of the leg's uid exists; after the hand-over every act inside it runs as
// the leg's uid (./leg-shell.ts), the checkout of the clone's files included.
// svc (root) never runs git in the agent's clone either: its .git/config is the agent's, and a
// `core.fsmonitor`, hook or alias there would run as root (the reason git has safe.directory). The
// commits cross over as a bundle (plain data, fsck-checked on fetch) that svc fetches into the worktree.
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { handOver, legEnded, legStarted, legsRoot, removeLegDir, removeLegFolder, svcGit, svcSh } from './leg-folder.js';
import { lastLine, run, type Run } from '../process/run.js';
import { CHECKOUT, COLLECT_AND_CLEAR, LEG } from './leg-shell.js';
import { gitValue, pointAgentRepo, sourceRepo, trackingConfig, writeAgentRepo } from './agent-repo.js';
import { killAllOf } from './pool.js';
import { copyAgentSettings } from './settings.js';
import type { AgentUser } from './user.js';
import { checkOut, onBranch } from '../git/worktree.js';
import type { PreparedWorktree } from '../ports.js';

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

export interface PrepareAgentLegOptions {
  user: AgentUser;
  /** The repository the worktree belongs to (the clone's source). */
  repo: string;
  key: string;
  /** A folder only svc may open, for the bundle in transit (the run's state folder). */
  privateDir: string;
  /** The prompt, written into the leg's folder before the hand-over. */
  prompt?: string;
  /** Where the agents' settings are copied from: svc's HOME and environment. */
  settingsFrom?: { home: string | undefined; env: Readonly<Record<string, string | undefined>> };
}
const identities = new Map<string, Promise<Identity>>();
const sharedOk = new Map<string, Promise<boolean>>();

/** svc's git identity for the repository (empty where it has none), so the agent's commits read as today's. */
interface Identity {
  name: string;
  email: string;
}

function identityOf(common: string): Promise<Identity> {
  let p = identities.get(common);
  if (!p) {
    p = run('git', ['config', '--get-regexp', '^user\\.(name|email)$'], { cwd: common }).then((r) => {
      const id: Identity = { name: '', email: '' };
      for (const line of r.stdout.split('\n')) {
        const at = line.indexOf(' ');
        if (at > 0 && (line.slice(5, at) === 'name' || line.slice(5, at) === 'email')) id[line.slice(5, at) as keyof Identity] = line.slice(at + 1);
      }
      return id;
    });
    identities.set(common, p);
  }
  return p;
}

/**
 * Whether the agent user can read the repository's object store: then its clone borrows the
 * objects (root writes the repository, the uid checks it out); otherwise root copies the objects
 * (`git clone --no-hardlinks`) and hands the whole clone over. Asked once per user and repository.
 */
function canShare(user: AgentUser, objects: string): Promise<boolean> {
  const key = `${user.uid}:${user.gid}:${objects}`;
  let p = sharedOk.get(key);
  if (!p) {
    p = run('test', ['-r', objects, '-a', '-x', objects, '-a', '-r', join(objects, 'pack'), '-a', '-x', join(objects, 'pack')], {
      user,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    }).then((r) => r.code === 0);
    sharedOk.set(key, p);
  }
  return p;
}

const agentGitEnv = (home: string): Record<string, string> => ({
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: home,
  LANG: 'C.UTF-8',
  GIT_TERMINAL_PROMPT: '0',
  GIT_CONFIG_GLOBAL: join(home, '.gitconfig'),
});

/**
 * Prepares the agent's folder for one leg: home, temp folder, prompt, settings, the clone's
 * repository (or, where the agent user cannot read the objects, a copy of them); `attach` finishes
 * it once the card's worktree is there.
 */
export async function prepareAgentLeg(opts: PrepareAgentLegOptions): Promise<AgentLeg> {
  const { user, key } = opts;
  legStarted();
  let dir: string;
  try {
    dir = mkdtempSync(join(await legsRoot(), `${key}-`));
  } catch (error) {
    legEnded();
    throw error;
  }
  const home = join(dir, 'home');
  const tmp = join(dir, 'tmp');
  const workdir = join(dir, 'work');
  const promptFile = join(dir, 'prompt.md');
  let extraEnv: Record<string, string> = {};
  let common: string;
  let shared: boolean;
  let identity: Identity;
  try {
    const source = await sourceRepo(opts.repo);
    common = source.common;
    const [id, share] = await Promise.all([identityOf(common), canShare(user, join(common, 'objects'))]);
    identity = id;
    shared = share;
    // Made while the folder is root's and no process of the leg's uid exists: nothing here can be
    // a link the agent planted. A dozen small files: synchronous calls, since a round trip through
    // the thread pool per call costs more than the call (docs/trust.md, "What it costs").
    mkdirSync(home, { mode: 0o700 });
    mkdirSync(tmp, { mode: 0o700 });
    if (opts.prompt !== undefined) writeFileSync(promptFile, opts.prompt, { mode: 0o600, flag: 'wx' });
    if (opts.settingsFrom) extraEnv = await copyAgentSettings(opts.settingsFrom.home, opts.settingsFrom.env, home);
    // The agent's own git config: svc's identity, and (for its clone of a repository root owns)
    // git's ownership check told about that repository.
    const user_ = [identity.name && `\tname = ${gitValue(identity.name)}\n`, identity.email && `\temail = ${gitValue(identity.email)}\n`].join('');
    writeFileSync(join(home, '.gitconfig'), `${user_ ? `[user]\n${user_}` : ''}${shared ? `[safe]\n\tdirectory = ${common}\n` : ''}`, {
      mode: 0o600,
      flag: 'wx',
    });
    if (!shared) {
      // The agent user cannot read the objects: root makes the copy, before the hand-over.
      const local = [...(identity.name ? ['-c', `user.name=${identity.name}`] : []), ...(identity.email ? ['-c', `user.email=${identity.email}`] : [])];
      await svcGit(dir, ['clone', '--quiet', '--template=', '--no-checkout', '--no-hardlinks', ...local, '--', common, workdir]);
    } else {
      writeAgentRepo(workdir, { source, identity });
    }
  } catch (error) {
    // Never handed over: root's own folder, which no process of the uid has seen.
    rmSync(dir, { recursive: true, force: true });
    legEnded();
    throw error;
  }
  let bound: PreparedWorktree | null = null;
  const wtOf = (): PreparedWorktree => {
    if (!bound) throw new Error("the agent's leg is not attached to its worktree");
    return bound;
  };
  let cleared = false;
  let pending = shared;
  let folded = false;
  let legFds: number[] | null = null;
  const bundle = join(opts.privateDir, `${key}.bundle`);
  const results = join(opts.privateDir, `${key}.collect`);
  let cloneMade = true;
  let movedAfterCheck: string | null = null;
  const ended = (): void => {
    if (cleared) return;
    cleared = true;
    legEnded();
  };
  return {
    user,
    workdir,
    home,
    promptFile,
    get startIn() {
      return pending ? dir : workdir;
    },
    async attach(wt) {
      if (bound) throw new Error("the agent's leg is attached already");
      try {
        if (shared) {
          pointAgentRepo(workdir, wt.branch, wt.headBefore);
          handOver(dir, user);
        } else {
          await checkOut(
            () => svcGit(dir, ['-C', workdir, 'checkout', '--quiet', '-B', wt.branch, wt.headBefore]),
            () => onBranch(workdir, wt.branch),
          );
          const r = await run('chown', ['-R', '--no-dereference', '--', `${user.uid}:${user.gid}`, dir]);
          if (r.code !== 0) throw new Error(`chown: ${r.stderr.trim()}`);
        }
      } catch (error) {
        // By who owns the folder now (a hand-over or a chown may have stopped part-way): the attach's
        // own error is the one thrown, and a folder its uid could not empty is left where it is.
        await removeLegFolder(dir).catch(() => undefined);
        cleared = true;
        legEnded();
        throw error;
      }
      bound = wt;
    },
    get cloneMade() {
      return cloneMade;
    },
    get movedAfterCheck() {
      return movedAfterCheck;
    },
    // The clone is made by the agent user in the same process start as the agent (two forks of
    // node fewer per leg); where a workflow step came first, it was made already.
    command(argv) {
      if (folded) {
        pending = false;
        const wt = wtOf();
        return ['/bin/sh', '-c', LEG, 'svc-agent-leg', workdir, common, wt.branch, trackingConfig(wt.branch), wt.headBefore, dir, tmp, ...argv];
      }
      if (pending) throw new Error("the agent's clone is not made: call ensureClone() or collectWithAgent() first");
      return [...argv];
    },
    collectWithAgent() {
      folded = true;
    },
    fds() {
      if (!folded) return [];
      if (!legFds) {
        // svc's own files, opened by svc: the agent never names a path svc would open.
        mkdirSync(opts.privateDir, { recursive: true, mode: 0o700 });
        legFds = [openSync(results, 'w', 0o600), openSync(bundle, 'w', 0o600)];
      }
      return legFds;
    },
    async writeAsAgent(name, content) {
      const r = await run('/bin/sh', ['-c', 'cat > "$1"', 'sh', join(dir, name)], { user, env: { PATH: '/usr/bin:/bin' }, input: content });
      if (r.code !== 0) throw new Error(`could not write ${name} as ${user.name}: ${lastLine(r)}`);
    },
    async ensureClone() {
      if (!pending) return;
      const wt = wtOf();
      const r = await run('/bin/sh', ['-c', CHECKOUT, 'svc-agent-leg', workdir, common, wt.branch, trackingConfig(wt.branch)], {
        user,
        env: agentGitEnv(home),
      });
      if (r.code !== 0) throw new Error(`could not make the agent's clone as ${user.name}: ${lastLine(r)}`);
      pending = false;
    },
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
        GIT_TERMINAL_PROMPT: '0',
        // Its own git config (identity, safe.directory), whatever file svc's own environment named.
        GIT_CONFIG_GLOBAL: join(home, '.gitconfig'),
        ...extraEnv,
        PWD: workdir,
      };
    },
    quiesce: () => killAllOf(user),
    async head() {
      if (pending) return null;
      const r = await run('git', ['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], { cwd: workdir, user, env: agentGitEnv(home) });
      const sha = r.stdout.trim();
      return r.code === 0 && /^[0-9a-f]{40,64}$/.test(sha) ? sha : null;
    },
    async collect(how = {}) {
      const wt = wtOf();
      let keep = false;
      try {
        let out: string | null = null;
        if (legFds) {
          for (const fd of legFds) closeSync(fd);
          legFds = null;
          // The leg's own shell collected it, unless it was killed first (then its lines end early).
          const said = readFileSync(results, 'utf8');
          const done = /^# svc-collected (\d+)$/m.exec(said);
          if (said.includes('# svc-no-clone')) out = said;
          else if (done) {
            if (done[1] !== '0') throw new Error(`reading the agent's work as ${user.name}: status ${done[1]}`);
            out = said;
          }
        }
        if (out === null) {
          await mkdir(opts.privateDir, { recursive: true, mode: 0o700 });
          const fd = openSync(bundle, 'w', 0o600);
          let r: Run;
          try {
            r = await run('/bin/sh', ['-c', COLLECT_AND_CLEAR, 'sh', workdir, wt.branch, wt.headBefore, dir, tmp, how.pin ?? ''], {
              user,
              env: agentGitEnv(home),
              fd3: fd,
            });
          } finally {
            closeSync(fd);
          }
          if (r.code !== 0) throw new Error(`reading the agent's work as ${user.name}: ${lastLine(r)}`);
          out = r.stdout;
        }
        try {
          rmdirSync(dir);
        } catch {
          // Kept: its emptying failed, and `runs recover` or `worktrees prune` removes it later.
        }
        ended();
        if (out.includes('# svc-no-clone')) cloneMade = false;
        const field = (name: string) => new RegExp(`^# svc-${name} ?([0-9a-f]*)$`, 'm').exec(out)?.[1] ?? '';
        const sha = field('sha');
        movedAfterCheck = field('moved') || null;
        const wip = field('wip');
        const moved = /^[0-9a-f]{40,64}$/.test(sha) && sha !== wt.headBefore;
        if (!moved && !wip) return false;
        // Whatever else the bundle holds, only the commits seen above are checked out.
        keep = true;
        const refs = [...(moved ? [`refs/heads/${wt.branch}`] : []), ...(wip ? ['refs/svc/uncommitted'] : [])];
        const fetch = `git -C "$1" -c transfer.fsckObjects=true fetch --quiet --no-tags "$2" ${refs.map((_, i) => `"$${i + 4}"`).join(' ')}`;
        await svcSh(moved ? `${fetch} && git -C "$1" reset --quiet --keep "$3"` : fetch, [wt.path, bundle, sha, ...refs]);
        // Uncommitted work shows in the worktree as uncommitted work (review legs, prune and `git
        // status` judge it there); a two-tree read-tree refuses to overwrite local changes.
        if (wip) await svcSh('git -C "$1" read-tree -m -u HEAD "$2" && git -C "$1" reset --quiet', [wt.path, wip]);
        keep = false;
        return true;
      } catch (error) {
        if (keep) throw new Error(`${(error as Error).message} (the agent's work is kept in ${bundle})`);
        throw error;
      } finally {
        if (!keep) rmSync(bundle, { force: true });
        rmSync(results, { force: true });
      }
    },
    async dispose() {
      if (legFds) for (const fd of legFds.splice(0)) closeSync(fd);
      legFds = null;
      rmSync(results, { force: true });
      rmSync(bundle, { force: true });
      if (cleared) return;
      // Not handed over yet: still root's own folder, which no process of the uid has seen.
      if (!bound) rmSync(dir, { recursive: true, force: true });
      else await removeLegDir(dir, user);
      ended();
    },
  };
}
