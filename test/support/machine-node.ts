// The machine's own Node 20 (Debian's, what `node` is on a user's PATH there; CI's .ci/run runs on
// it): the tests of svc as such a user gets it run their programs with it first on PATH. Without
// it they fail with one line saying so, never skip: a skipped test would read as green.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname } from 'node:path';

const CANDIDATES = ['/usr/bin/node', '/usr/local/bin/node'];

/** The path of the machine's Node 20, or an error naming where it was looked for. */
export function machineNode20(): string {
  for (const path of CANDIDATES) {
    if (!existsSync(path)) continue;
    if (execFileSync(path, ['-p', 'process.versions.node.split(".")[0]'], { encoding: 'utf8' }).trim() === '20') return path;
  }
  throw new Error(`these tests need the machine's Node 20 at ${CANDIDATES.join(' or ')} (Debian: apt-get install nodejs npm); none is there`);
}

/** `env.PATH` with the machine's Node 20 (and the npm beside it) first, as on the user's machine. */
export function node20First(path = process.env.PATH ?? ''): string {
  return `${dirname(machineNode20())}:${path}`;
}
