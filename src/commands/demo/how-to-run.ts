// How a person runs this very svc from where the demo printed its hint: `svc` when that name on
// PATH is this program; `npx svc` under `npm run` in a clone (npm puts the clone's own Node 22 and
// bins first on PATH there, as it does for npx); else this Node and this bin, spelled out.
import { accessSync, constants, realpathSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/** The program `name` on `path` resolves to, or null. */
function onPath(name: string, path: string | undefined): string | null {
  for (const dir of (path ?? '').split(delimiter)) {
    if (!dir) continue;
    try {
      accessSync(join(dir, name), constants.X_OK);
      return realpathSync(join(dir, name));
    } catch {
      // not there
    }
  }
  return null;
}

export function howToRun(env: NodeJS.ProcessEnv, bin: string, node = process.execPath): string {
  const ours = (() => {
    try {
      return realpathSync(bin);
    } catch {
      return bin;
    }
  })();
  if (onPath('svc', env.PATH) === ours) return 'svc';
  if (env.npm_lifecycle_event) return 'npx svc';
  return `${node} ${ours}`;
}
