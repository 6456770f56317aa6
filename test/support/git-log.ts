// A `git` on PATH that writes down each call before it runs the real one: what a piece of svc
// asks git is counted (each git process is a fork of svc and a git start-up). git's own children,
// such as the upload-pack behind an ls-remote, run from git's exec path and are not counted.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface GitLog {
  /** The folder to put first on PATH. */
  bin: string;
  /** Each call's arguments, one string each, in order. */
  calls(): string[];
  /** Forgets the calls so far. */
  clear(): void;
}

export function loggingGit(): GitLog {
  const bin = mkdtempSync(join(tmpdir(), 'svc-git-log-'));
  const log = join(bin, 'calls');
  writeFileSync(log, '');
  const real = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
  writeFileSync(join(bin, 'git'), `#!/bin/sh\nprintf '%s\\n' "$*" >> '${log}'\nexec '${real}' "$@"\n`);
  chmodSync(join(bin, 'git'), 0o755);
  return {
    bin,
    calls: () => readFileSync(log, 'utf8').split('\n').filter(Boolean),
    clear: () => writeFileSync(log, ''),
  };
}
