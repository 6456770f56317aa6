// A leg's folder is removed by who owns it (src/dispatch/boundary/leg-folder.ts removeLegFolder), as
// root with the real `nobody`: one still svc's own goes whole; one handed over is emptied as its
// uid; one handed over that its uid cannot empty stays, root never walking it.
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { handOver, removeLegFolder } from '../../../src/dispatch/boundary/leg-folder.js';
import { lookupUser } from '../../../src/dispatch/boundary/user.js';

const isRoot = process.getuid?.() === 0;

/** A leg-like folder in a root-owned 0711 root, as legsRoot makes them: the uid reaches its own by path. */
function legFolder(): string {
  const root = mkdtempSync(join(tmpdir(), 'svc-leg-folder-'));
  chmodSync(root, 0o711);
  const dir = mkdtempSync(join(root, 'PROJ-1-'));
  mkdirSync(join(dir, 'work'));
  writeFileSync(join(dir, 'work', 'file'), 'x');
  return dir;
}

test.runIf(isRoot)("a folder still svc's own goes whole; one handed over is emptied as its uid", async () => {
  const nobody = (await lookupUser('nobody'))!;
  const own = legFolder();
  expect(await removeLegFolder(own)).toBe(true);
  expect(existsSync(own)).toBe(false);
  const handed = legFolder();
  handOver(handed, nobody);
  expect(await removeLegFolder(handed)).toBe(true);
  expect(existsSync(handed)).toBe(false);
  expect(await removeLegFolder(handed)).toBe(false);
});

test.runIf(isRoot)('a handed-over folder its uid cannot empty stays as it is: root never walks it', async () => {
  const nobody = (await lookupUser('nobody'))!;
  const dir = legFolder();
  handOver(dir, nobody);
  // Something in it the uid cannot remove: a root-owned folder holding a root-owned file.
  const rootsOwn = join(dir, 'roots');
  mkdirSync(rootsOwn, { mode: 0o755 });
  writeFileSync(join(rootsOwn, 'kept'), 'root wrote this');
  chownSync(rootsOwn, 0, 0);
  await expect(removeLegFolder(dir)).rejects.toThrow(/could not remove/);
  expect(existsSync(join(rootsOwn, 'kept'))).toBe(true);
});
