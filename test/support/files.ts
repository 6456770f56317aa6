// The files a test left behind, for secret scans: every regular file below a folder, its bytes as
// latin1 text (so any byte sequence is searchable) and its mode.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

export function filesUnder(dir: string): { path: string; text: string; mode: number }[] {
  const out: { path: string; text: string; mode: number }[] = [];
  const walk = (d: string) => {
    let names: string[];
    try {
      names = readdirSync(d);
    } catch {
      return;
    }
    for (const name of names) {
      const p = join(d, name);
      const st = statSync(p, { throwIfNoEntry: false });
      if (!st) continue;
      if (st.isDirectory()) walk(p);
      else if (st.isFile()) out.push({ path: p, text: readFileSync(p).toString('latin1'), mode: st.mode & 0o777 });
    }
  };
  walk(dir);
  return out;
}
