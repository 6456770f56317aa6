// svc's private folders (state, config, the broker's socket): only svc's own user may open them, so
// an agent that runs as another user (--agent-user) finds nothing there. node:fs only: the
// credential helper's path loads this, and it must stay small.
import { chmod, lstat } from 'node:fs/promises';
import { makeDirs } from './make-dirs.js';

/**
 * A folder only svc's user may open (0700): created when missing, tightened when svc owns it and
 * others could enter. A folder svc does not own is left as it is (not ours to change).
 */
export async function ensurePrivateDir(dir: string): Promise<void> {
  makeDirs(dir, 0o700);
  const st = await lstat(dir);
  if (st.isDirectory() && (st.mode & 0o077) !== 0 && typeof process.getuid === 'function' && st.uid === process.getuid()) {
    await chmod(dir, 0o700);
  }
}
