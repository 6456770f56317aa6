// Leg folders of an svc that died (kill -9, a lost machine) are never disposed of by it: `svc runs
// recover` and `svc worktrees prune` remove those no live svc owns (docs/trust.md). A legs root
// names its owner (pid and start time); a root whose owner is alive is left alone, whatever it
// holds. Inside a dead one, each leg folder is emptied as the uid that owns it (so root never
// walks a tree an agent made), then removed; the stale uid leases are freed with their processes.
import { lstatSync, readdirSync, rmdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LEGS_OWNER_FILE, LEGS_ROOT_PREFIX, removeLegFolder } from './leg-folder.js';
import { isAlive, readMark } from '../state/run-lock.js';
import { freeStaleLeases } from './pool.js';

/** How long a legs root that names no owner yet is taken for one being made. */
const UNNAMED_GRACE_MS = 60_000;

export interface OrphanLegs {
  /** Leg folders removed. */
  removed: string[];
  /** uids whose stale lease was freed (their processes killed). */
  freedUids: number[];
}

/** Removes a dead svc's legs root: each leg folder as the uid that owns it, then the root. */
async function clearRoot(root: string, removed: string[]): Promise<void> {
  for (const leg of readdirSync(root)) {
    if (leg === LEGS_OWNER_FILE) continue;
    const path = join(root, leg);
    // No kill here: the uid may be leased by a live leg by now (freeStaleLeases kills for dead ones).
    if (await removeLegFolder(path)) removed.push(path);
  }
  rmSync(join(root, LEGS_OWNER_FILE), { force: true });
  rmdirSync(root);
}

/** Removes the leg folders of svc processes that are gone, and frees their uids. */
export async function removeOrphanLegs(tmp: string = tmpdir()): Promise<OrphanLegs> {
  const removed: string[] = [];
  const me = process.getuid?.();
  let names: string[] = [];
  try {
    names = readdirSync(tmp).filter((n) => n.startsWith(LEGS_ROOT_PREFIX));
  } catch {
    // No temp folder to look in: nothing of ours is there.
  }
  for (const name of names) {
    const root = join(tmp, name);
    const st = lstatSync(root, { throwIfNoEntry: false });
    // Only svc's own roots (made 0711 by its user); a look-alike someone else made is not ours.
    if (!st?.isDirectory() || st.uid !== me) continue;
    const owner = readMark(join(root, LEGS_OWNER_FILE));
    if (owner && isAlive(owner)) continue;
    // A root names its owner right after it is made: one without a name is a live svc's for a moment.
    if (!owner && Date.now() - st.mtimeMs < UNNAMED_GRACE_MS) continue;
    try {
      await clearRoot(root, removed);
    } catch (error) {
      // Another svc (a recover or a prune beside this one) cleared it first.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  return { removed, freedUids: await freeStaleLeases() };
}
