// `mkdir -p` that cannot spin. Node's recursive mkdir loops forever, at full CPU and deaf to
// signals when synchronous, on a path whose parent exists but refuses the child with ENOENT (any
// path under /proc, e.g. `--report junit:/proc/nope/x.xml`). Each missing level is made on its own,
// so such a path fails at once with the error of the level that could not be made.
import { mkdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

export function makeDirs(dir: string, mode?: number): void {
  const missing: string[] = [];
  for (let d = resolve(dir); ; ) {
    const st = statSync(d, { throwIfNoEntry: false });
    if (st) {
      if (!st.isDirectory()) throw Object.assign(new Error(`ENOTDIR: not a directory, mkdir '${d}'`), { code: 'ENOTDIR', path: d });
      break;
    }
    missing.push(d);
    const up = dirname(d);
    if (up === d) break;
    d = up;
  }
  for (const d of missing.reverse()) {
    try {
      mkdirSync(d, mode === undefined ? undefined : { mode });
    } catch (error) {
      // Made meanwhile by another process: that is what was wanted.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || !statSync(d, { throwIfNoEntry: false })?.isDirectory()) throw error;
    }
  }
}
