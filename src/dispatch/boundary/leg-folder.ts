// A leg's folder for an agent user (./clone.ts, docs/trust.md): one root per svc process in
// the temp folder, root-owned 0711 and naming its owner, and in it a folder per leg with a random
// name; how svc hands a folder over and removes it as the uid that owns it. Root never walks a tree an agent made: the removal runs as
// the folder's uid, and root removes only the empty folder, whose entry lies in its own root.
import { lchownSync, lstatSync, readdirSync, rmdirSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { chmod, mkdtemp, rmdir, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { selfMark } from '../state/run-lock.js';
import { KILL_ALL } from './leg-shell.js';
import { run, runOk } from '../process/run.js';

/** The name of each svc process's legs root in the temp folder (`runs recover` looks for it). */
export const LEGS_ROOT_PREFIX = 'svc-agent-legs-';
/** Inside a legs root: who made it (pid and start time), so cleanup knows a live root from a dead one. */
export const LEGS_OWNER_FILE = 'owner';

/** svc's own git, or a shell of git commands on positional parameters; rejects with git's last complaint. */
export async function svcGit(cwd: string, args: string[]): Promise<string> {
  return (await runOk('git', args, { cwd }, `git ${args[0]}`)).trim();
}
export async function svcSh(script: string, args: string[]): Promise<void> {
  await runOk('/bin/sh', ['-c', script, 'sh', ...args], {}, 'git');
}

let agentsRoot: Promise<string> | null = null;
/** The root's path once made: what the synchronous clean-up of the last leg removes. */
let rootPath: string | null = null;
let liveLegs = 0;

/** A leg starts: its root stays until the last leg that started has ended. */
export function legStarted(): void {
  liveLegs++;
}

/**
 * Keeps the legs root for a run's legs: one leg after another would otherwise make and remove it
 * each time. Returns the release (idempotent); the root goes with the last leg or release.
 */
export function holdLegsRoot(): () => void {
  legStarted();
  let held = true;
  return () => {
    if (!held) return;
    held = false;
    legEnded();
  };
}

/**
 * One folder per svc process for the agents' legs: root-owned 0711, so an agent reaches its own
 * leg (0700, its own) by path but cannot list the others, nor rename or replace any. It names its
 * owner, and goes with the last leg of the process.
 */
export function legsRoot(): Promise<string> {
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
export function legEnded(): void {
  liveLegs--;
  if (liveLegs > 0 || !rootPath) return;
  const root = rootPath;
  try {
    // A kept clone (its work could not be read) keeps the root; `runs recover` removes it later.
    if (!readdirSync(root).every((name) => name === LEGS_OWNER_FILE)) return;
    unlinkSync(join(root, LEGS_OWNER_FILE));
    rmdirSync(root);
  } catch {
    // Gone already: the next leg makes a new one.
  }
  agentsRoot = null;
  rootPath = null;
}

/**
 * Hands what svc made in the leg's folder to the agent user: lchown, never following a link, the
 * folder itself last. Synchronous: a few dozen entries, where a thread-pool round trip per entry
 * cost more than the calls.
 */
export function handOver(path: string, user: { uid: number; gid: number }): void {
  for (const entry of readdirSync(path, { withFileTypes: true })) {
    const child = join(path, entry.name);
    if (entry.isDirectory()) handOver(child, user);
    else lchownSync(child, user.uid, user.gid);
  }
  lchownSync(path, user.uid, user.gid);
}

/**
 * Removes a leg's folder by who owns it, not by what failed: one handed over is emptied as its uid
 * (`removeLegDir`, no kill), one still svc's own is removed by svc (no process of any uid entered a
 * 0700 folder of svc's, whatever of it was handed over inside). A handed-over folder its uid cannot
 * empty stays, and the error says so: root never walks it. False when there was no folder.
 */
export async function removeLegFolder(dir: string): Promise<boolean> {
  const st = lstatSync(dir, { throwIfNoEntry: false });
  if (!st) return false;
  if (st.isDirectory() && st.uid !== process.getuid?.()) await removeLegDir(dir, { uid: st.uid, gid: st.gid }, false);
  else rmSync(dir, { recursive: true, force: true });
  return true;
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
