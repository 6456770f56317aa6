// Leg folders of an svc that died (kill -9, a lost machine) are never disposed of by it: `svc runs
// recover` and `svc worktrees prune` remove those no live svc owns (docs/trust.md). A legs root
// names its owner (pid and start time); a root whose owner is alive is left alone, whatever it
// holds. Inside a dead one, each leg folder is emptied as the uid that owns it (so root never
// walks a tree an agent made), then removed; the stale uid leases are freed with their processes.
import { lstatSync, readdirSync, readFileSync, rmdirSync, rmSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LEGS_OWNER_FILE, LEGS_ROOT_PREFIX, removeLegDir } from '../agent-clone.js';
import { isAlive, type ProcessMark } from '../run-lock.js';
import { freeStaleLeases } from './pool.js';

export interface OrphanLegs {
  /** Leg folders removed. */
  removed: string[];
  /** uids whose stale lease was freed (their processes killed). */
  freedUids: number[];
}

function ownerOf(root: string): ProcessMark | null {
  try {
    const m = JSON.parse(readFileSync(join(root, LEGS_OWNER_FILE), 'utf8')) as ProcessMark;
    return Number.isInteger(m?.pid) ? m : null;
  } catch {
    return null;
  }
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
    const owner = ownerOf(root);
    if (owner && isAlive(owner)) continue;
    for (const leg of readdirSync(root)) {
      if (leg === LEGS_OWNER_FILE) continue;
      const path = join(root, leg);
      const entry = lstatSync(path, { throwIfNoEntry: false });
      if (!entry) continue;
      if (entry.isDirectory() && entry.uid !== me) {
        // No kill here: the uid may be leased by a live leg by now (freeStaleLeases kills for dead ones).
        await removeLegDir(path, { uid: entry.uid, gid: entry.gid }, false);
      } else {
        // Still svc's own (its prepare died before the hand-over): nothing of an agent's is in it.
        rmSync(path, { recursive: true, force: true });
      }
      removed.push(path);
    }
    try {
      unlinkSync(join(root, LEGS_OWNER_FILE));
    } catch {
      // A root that died before it named its owner.
    }
    rmdirSync(root);
  }
  return { removed, freedUids: await freeStaleLeases() };
}
