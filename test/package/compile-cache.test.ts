// bin/svc.js turns on Node's compile cache in the user's cache folder (README, Benchmarks). A home
// that cannot hold it (read-only, missing, a file) must change nothing but the speed: the command
// still answers, on stdout alone, with its usual exit code. A folder not made yet begins as the one
// npm's install step (or the build) made in dist/compile-cache (bin/compile-cache.mjs), linked.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, test } from 'vitest';
import { BIN } from '../support/cli.js';

const REPO = resolve(import.meta.dirname, '../..');

/** svc's environment here: its own config and state folders, no compile-cache setting of the runner's. */
function svcEnvOf(env: Record<string, string>): Record<string, string> {
  const scratch = mkdtempSync(join(tmpdir(), 'svc-cc-'));
  const base: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env))
    if (v !== undefined && !k.startsWith('SVC_') && !k.startsWith('NODE_') && k !== 'XDG_CACHE_HOME') base[k] = v;
  return { ...base, SVC_CONFIG_DIR: join(scratch, 'config'), SVC_STATE_DIR: join(scratch, 'state'), ...env };
}

/** `bin` (a package copy's; undefined: the tree's) run as svc with `env` over svcEnvOf's. */
function svcAt(bin: string | undefined, env: Record<string, string>, ...args: string[]) {
  return spawnSync(process.execPath, [bin ?? BIN, ...args], { encoding: 'utf8', env: svcEnvOf(env) });
}

function svc(env: Record<string, string>, ...args: string[]) {
  return svcAt(undefined, env, ...args);
}

describe("the compile cache in the user's cache folder", () => {
  test('lands under XDG_CACHE_HOME/svc/compile-cache, else ~/.cache', () => {
    const xdg = mkdtempSync(join(tmpdir(), 'svc-xdg-'));
    expect(svc({ XDG_CACHE_HOME: xdg, HOME: '/nonexistent' }, 'config', 'set', 'project', 'PROJ')).toMatchObject({
      status: 0,
      stderr: 'project set to PROJ\n',
    });
    expect(readdirSync(join(xdg, 'svc', 'compile-cache')).length).toBeGreaterThan(0);
    const home = mkdtempSync(join(tmpdir(), 'svc-home-'));
    expect(svc({ HOME: home }, 'config', 'set', 'project', 'PROJ')).toMatchObject({ status: 0, stderr: 'project set to PROJ\n' });
    expect(existsSync(join(home, '.cache', 'svc', 'compile-cache'))).toBe(true);
  });

  // (Run as root, a read-only folder would still be written: a file where a folder must be made
  // fails the same way for every user.)
  test.each([
    [
      'a home that is a file',
      () => {
        const f = join(mkdtempSync(join(tmpdir(), 'svc-file-')), 'home');
        writeFileSync(f, '');
        return f;
      },
    ],
    [
      'a home whose .cache is a file',
      () => {
        const h = mkdtempSync(join(tmpdir(), 'svc-home-'));
        writeFileSync(join(h, '.cache'), '');
        return h;
      },
    ],
  ])('%s: the command answers as ever, nothing on stderr', (_name, home) => {
    const env = { HOME: home(), SVC_CONFIG_DIR: join(mkdtempSync(join(tmpdir(), 'svc-cfg-')), 'config') };
    expect(svc(env, 'config', 'set', 'project', 'PROJ')).toMatchObject({ status: 0, stderr: 'project set to PROJ\n' });
    const r = svc(env, 'config', 'get', 'project');
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('PROJ\n');
    expect(r.status).toBe(0);
  });
});

/** A copy of the built package (bin, dist) in a folder of its own, its compile cache made there. */
function packageCopy(): { root: string; bin: string; seed: string } {
  const root = mkdtempSync(join(tmpdir(), 'svc-pkg-'));
  cpSync(join(REPO, 'bin'), join(root, 'bin'), { recursive: true });
  cpSync(join(REPO, 'dist'), join(root, 'dist'), { recursive: true, filter: (src) => !src.includes('compile-cache') });
  cpSync(join(REPO, 'package.json'), join(root, 'package.json'));
  // On this Node, as npm's install step runs it on svc's own: the cache must be this Node's.
  const made = spawnSync(process.execPath, [join(root, 'bin', 'compile-cache.mjs'), '--seed'], { encoding: 'utf8' });
  expect(made.status, made.stderr).toBe(0);
  return { root, bin: join(root, 'bin', 'svc.js'), seed: join(root, 'dist', 'compile-cache') };
}

/** Each file of a folder tree: its path inside the folder → inode and a digest of its bytes. */
function filesOf(dir: string): Map<string, { ino: number; sum: string }> {
  const out = new Map<string, { ino: number; sum: string }>();
  for (const sub of readdirSync(dir)) {
    for (const f of readdirSync(join(dir, sub))) {
      const p = join(dir, sub, f);
      out.set(`${sub}/${f}`, { ino: statSync(p).ino, sum: createHash('sha256').update(readFileSync(p)).digest('hex') });
    }
  }
  return out;
}

describe('a fresh cache folder begins as the one made where svc is installed', () => {
  test('its entries are the installed ones, linked; Node uses them; a rewrite never reaches the installed folder', () => {
    const pkg = packageCopy();
    const seed = filesOf(pkg.seed);
    expect(seed.size).toBeGreaterThan(20);
    const xdg = mkdtempSync(join(tmpdir(), 'svc-xdg-'));
    const run = (...args: string[]) => svcAt(pkg.bin, { XDG_CACHE_HOME: xdg, NODE_DEBUG_NATIVE: 'COMPILE_CACHE' }, ...args);
    const first = run('config', 'get', 'project');
    expect(first.status, first.stderr).toBe(0);
    const mine = join(xdg, 'svc', 'compile-cache');
    const linked = filesOf(mine);
    for (const [name, f] of seed) expect(linked.get(name)?.ino, name).toBe(f.ino);
    expect(first.stderr).toMatch(/cache for file:\/\/\S+\/dist\/cli\.js was accepted/);
    expect(readdirSync(join(xdg, 'svc'))).toEqual(['compile-cache']);

    // A module changed under the cache (an entry Node must make again): Node writes the new entry
    // beside the old and renames it over, so the user's link goes and the installed file stays.
    appendFileSync(join(pkg.root, 'dist', 'cli.js'), '\n// changed\n');
    const second = run('config', 'get', 'project');
    expect(second.status).toBe(0);
    expect(second.stderr).toMatch(/writing cache for file:\/\/\S+\/dist\/cli\.js.*success/);
    expect(filesOf(pkg.seed)).toEqual(seed);
    const after = filesOf(mine);
    expect([...after].filter(([name, f]) => seed.get(name) && f.ino !== seed.get(name)!.ino)).toHaveLength(1);
  });

  // Each on a package copy of its own: the suite's pack test rebuilds the tree's dist/ for the
  // tarball, which carries no cache.
  test('a cache folder that exists is left as it is', () => {
    const pkg = packageCopy();
    const xdg = mkdtempSync(join(tmpdir(), 'svc-xdg-'));
    mkdirSync(join(xdg, 'svc', 'compile-cache'), { recursive: true });
    const r = svcAt(pkg.bin, { XDG_CACHE_HOME: xdg }, 'config', 'get', 'project');
    expect(r.status).toBe(0);
    const seeded = filesOf(pkg.seed);
    expect(seeded.size).toBeGreaterThan(20);
    const mine = filesOf(join(xdg, 'svc', 'compile-cache'));
    expect([...mine].filter(([name, f]) => seeded.get(name)?.ino === f.ino)).toEqual([]);
  });

  // /dev/shm is another filesystem than the package's: no hard link can cross into it.
  test.runIf(existsSync('/dev/shm'))('where links cannot be made (another filesystem), the folder starts empty and the command answers as ever', () => {
    const pkg = packageCopy();
    const xdg = mkdtempSync(join('/dev/shm', 'svc-xdg-'));
    try {
      const r = svcAt(pkg.bin, { XDG_CACHE_HOME: xdg }, 'config', 'get', 'project');
      expect(r.stderr).toBe('');
      expect(r.status).toBe(0);
      // No half-made folder beside it, and Node made its own entries as before.
      expect(readdirSync(join(xdg, 'svc'))).toEqual(['compile-cache']);
      const seeded = new Set([...filesOf(pkg.seed).values()].map((f) => f.ino));
      expect(seeded.size).toBeGreaterThan(20);
      expect([...filesOf(join(xdg, 'svc', 'compile-cache')).values()].filter((f) => seeded.has(f.ino))).toEqual([]);
    } finally {
      rmSync(xdg, { recursive: true, force: true });
    }
  });
});
