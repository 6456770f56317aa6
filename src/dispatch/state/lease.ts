// Leases in a folder only svc can write (a uid of the agent pool, a port of `ports: N`): a file per
// thing leased, named after it, holding the owner's mark (pid and start time, ./run-lock.ts). The
// file appears whole: the mark is written aside and linked into place, so a reader never meets a
// half-written lease and takes it for a dead one. A lease whose owner is gone (kill -9, pid reused)
// is stale and taken over under a short janitor lock, so two takers never both win it.
import { linkSync, lstatSync, mkdirSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isAlive, readMark, selfMark } from './run-lock.js';

/**
 * The first of `candidates` that is svc's own private folder: made 0700 by svc's user, or found so.
 * A folder someone else made (an agent that got to /tmp first) is refused rather than trusted;
 * throws with why when none is.
 */
export function ownPrivateFolder(candidates: readonly string[]): string {
  let why = '';
  for (const dir of candidates) {
    try {
      mkdirSync(dir, { mode: 0o700 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
        why = (error as Error).message;
        continue;
      }
    }
    const st = lstatSync(dir);
    if (st.isDirectory() && st.uid === process.getuid?.() && (st.mode & 0o077) === 0) return dir;
    why = `${dir} is not svc's own private folder (owner uid ${st.uid}, mode ${(st.mode & 0o777).toString(8)}): remove it`;
  }
  throw new Error(why);
}

/** Links a file holding this process's mark to `path`; false when `path` exists. */
function linkMark(dir: string, path: string): boolean {
  const aside = join(dir, `.new-${process.pid}`);
  writeFileSync(aside, JSON.stringify(selfMark()), { mode: 0o600 });
  try {
    linkSync(aside, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return false;
  } finally {
    unlinkSync(aside);
  }
}

/** Takes the lease `name` in `dir`: 'new'; or takes it over when its owner is gone: 'stale'; false when it is held. */
export function takeLease(dir: string, name: string): 'new' | 'stale' | false {
  const path = join(dir, name);
  if (linkMark(dir, path)) return 'new';
  const holder = readMark(path);
  if (holder && isAlive(holder)) return false;
  // Stale: cleared under the janitor lock, so two takers never both remove and re-create it.
  const janitor = join(dir, '.janitor');
  if (!linkMark(dir, janitor)) {
    const other = readMark(janitor);
    if (other && !isAlive(other)) unlinkSync(janitor);
    return false;
  }
  try {
    const again = readMark(path);
    if (again && isAlive(again)) return false;
    unlinkSync(path);
    return linkMark(dir, path) ? 'stale' : false;
  } catch {
    return false;
  } finally {
    unlinkSync(janitor);
  }
}

/** Gives the lease `name` back, when it is still this process's (a taker after a stale-lease race keeps theirs). */
export function dropLease(dir: string, name: string): void {
  const path = join(dir, name);
  try {
    if (readMark(path)?.pid === process.pid) unlinkSync(path);
  } catch {
    // Already gone: nothing to give back.
  }
}
