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
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { legEnded, legStarted, legsRoot, svcGit } from './leg-folder.js';
import { run } from '../process/run.js';
import { gitValue, sourceRepo, writeAgentRepo } from './agent-repo.js';
import { copyAgentSettings } from './settings.js';
import type { AgentUser } from './user.js';
import { LegFolder, type AgentLeg } from './agent-leg.js';

export type { AgentLeg } from './agent-leg.js';

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
  return new LegFolder({ user, dir, common, shared, extraEnv, privateDir: opts.privateDir, key });
}
