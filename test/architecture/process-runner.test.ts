// Every program the client starts goes through src/dispatch/process/ (run.ts: svc's own short
// programs; run-in-group.ts: a leg's, in a process group of its own), so its environment, user,
// timeout and exit-code handling are decided in one place (process/session.ts: the one program svc
// talks to for its life, the fence's `nft -i`). Named exceptions: src/dispatch/fence/bwrap.ts (the
// source of the launcher that node runs inside a leg's namespace, a string svc never runs itself),
// src/dispatch/hosted/git.ts (simple-git,
// whose process handling is the library's own) and src/server/ (it depends only on the contract).
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, test } from 'vitest';

const SRC = resolve(import.meta.dirname, '../../src');

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** The modules that start processes, however a file reaches them: import, import(), require or getBuiltinModule. */
const SPAWNERS =
  /(?:from\s+|import\s*\(\s*|require\s*\(\s*|getBuiltinModule\s*\(\s*)['"]((?:node:)?child_process|(?:node:)?cluster|execa|simple-git|cross-spawn)['"]/g;

/** Each file of src/ (relative) with the process modules it reaches. */
function spawningFiles(): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const file of files(SRC)) {
    const found = [...readFileSync(file, 'utf8').matchAll(SPAWNERS)].map((m) => m[1]!);
    if (found.length) out.set(relative(SRC, file), [...new Set(found)]);
  }
  return out;
}

const EXCEPTIONS: readonly { where: RegExp; may: readonly string[] }[] = [
  { where: /^dispatch\/process\//, may: ['node:child_process'] },
  // The launcher's source: node runs it in the leg's namespace (bwrap.ts); svc's own spawn is process/'s.
  { where: /^dispatch\/fence\/bwrap\.ts$/, may: ['node:child_process'] },
  { where: /^dispatch\/hosted\/git\.ts$/, may: ['simple-git'] },
  { where: /^server\//, may: ['node:child_process'] },
];

describe('one process runner', () => {
  const spawning = spawningFiles();

  test('no file of src/ outside dispatch/process/ (and the named exceptions) reaches child_process, execa or simple-git', () => {
    const offenders = [...spawning].filter(([file, mods]) => !mods.every((m) => EXCEPTIONS.some((e) => e.where.test(file) && e.may.includes(m))));
    expect(offenders).toEqual([]);
  });

  test('src/commands, src/api, src/ui and src/cli.ts start no program at all', () => {
    expect([...spawning.keys()].filter((file) => /^(commands|api|ui|contract|html)\/|^cli\.ts$/.test(file))).toEqual([]);
  });

  test('the scan sees every way a file reaches them (the runner itself, the session, the bridge, simple-git)', () => {
    // run.ts takes child_process with getBuiltinModule, run-in-group.ts imports it: both must be seen,
    // or the rule above could pass by seeing nothing.
    expect(spawning.get('dispatch/process/run.ts')).toEqual(['node:child_process']);
    expect(spawning.get('dispatch/process/run-in-group.ts')).toEqual(['node:child_process']);
    expect(spawning.get('dispatch/hosted/git.ts')).toEqual(['simple-git']);
    expect(spawning.get('dispatch/process/session.ts')).toEqual(['node:child_process']);
    expect([...spawning.keys()].filter((f) => f.startsWith('dispatch/fence/'))).toEqual(['dispatch/fence/bwrap.ts']);
    const seen = (text: string) => [...text.matchAll(SPAWNERS)].map((m) => m[1]);
    expect(seen(`import { execa } from 'execa';`)).toEqual(['execa']);
    expect(seen(`const { spawn } = require('child_process');`)).toEqual(['child_process']);
    expect(seen(`await import("node:child_process")`)).toEqual(['node:child_process']);
    expect(seen(`import type { ChildProcess } from 'node:child_process';`)).toEqual(['node:child_process']);
  });
});
