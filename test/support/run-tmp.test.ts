// The run's temp folder (scripts/run-tmp.mjs, test/support/run-tmp.ts): what tests and the processes
// they start make in the temp folder lands in one folder per run, which goes when the run ends.
import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { describe, expect, inject, test } from 'vitest';
import { RUN_TMP_OWNER, removeTree, runTmpPrefix } from '../../scripts/run-tmp.mjs';
import { isolatedEnv } from './cli.js';

const MODULE = resolve(import.meta.dirname, '../../scripts/run-tmp.mjs');

describe("the tests' temp folder", () => {
  test("is the run's own folder, not the machine's: os.tmpdir() and mkdtemp land in it", () => {
    const runTmp = inject('runTmp');
    expect(runTmp).toBeTruthy();
    expect(tmpdir()).toBe(runTmp);
    expect(basename(runTmp).startsWith(runTmpPrefix('test'))).toBe(true);
    expect(dirname(mkdtempSync(join(tmpdir(), 'svc-x-')))).toBe(runTmp);
  });

  test('agent users can traverse it (0755, root-owned), as they could the sticky /tmp', () => {
    const st = statSync(inject('runTmp'));
    expect(st.mode & 0o7777).toBe(0o755);
    expect(st.uid).toBe(process.getuid!());
  });

  test("a spawned program's mktemp lands in it too (TMPDIR is inherited)", () => {
    const made = execFileSync('bash', ['-c', 'mktemp'], { env: isolatedEnv(), encoding: 'utf8' }).trim();
    expect(dirname(made)).toBe(inject('runTmp'));
  });
});

describe('removeTree', () => {
  test('removes a link, never what it points to, and what another uid wrote', () => {
    const outside = mkdtempSync(join(tmpdir(), 'svc-outside-'));
    writeFileSync(join(outside, 'keep'), 'x');
    const tree = mkdtempSync(join(tmpdir(), 'svc-tree-'));
    const agent = join(tree, 'leg');
    mkdirSync(join(agent, 'deep'), { recursive: true });
    writeFileSync(join(agent, 'deep', 'file'), 'y');
    symlinkSync(outside, join(agent, 'to-dir'));
    symlinkSync(join(outside, 'keep'), join(agent, 'deep', 'to-file'));
    for (const p of [agent, join(agent, 'deep'), join(agent, 'deep', 'file')]) chownSync(p, 65534, 65534);
    expect(removeTree(tree)).toBeNull();
    expect(existsSync(tree)).toBe(false);
    expect(readdirSync(outside)).toEqual(['keep']);
  });

  test("detaches a mount left inside (a test's busy tmpfs, a bind mount) and never empties what it showed", (t) => {
    const outside = mkdtempSync(join(tmpdir(), 'svc-outside-'));
    writeFileSync(join(outside, 'keep'), 'x');
    const tree = mkdtempSync(join(tmpdir(), 'svc-tree-'));
    mkdirSync(join(tree, 'tmpfs'));
    mkdirSync(join(tree, 'bind'));
    const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', join(tree, 'tmpfs')], { encoding: 'utf8' });
    if (mounted.status !== 0) {
      console.warn(`skipped: cannot mount a tmpfs here (${(mounted.error?.message ?? mounted.stderr).trim()}); this test needs root`);
      t.skip();
      return;
    }
    expect(spawnSync('mount', ['--bind', outside, join(tree, 'bind')]).status).toBe(0);
    // An open file keeps the tmpfs busy: a plain umount (or rm on the mount point) would fail.
    const fd = openSync(join(tree, 'tmpfs', 'open'), 'w');
    try {
      expect(removeTree(tree)).toBeNull();
    } finally {
      closeSync(fd);
    }
    expect(existsSync(tree)).toBe(false);
    expect(readdirSync(outside)).toEqual(['keep']);
    expect(readFileSync('/proc/self/mountinfo', 'utf8')).not.toContain(tree);
  });
});

describe('openRunTmp in a process of its own', () => {
  /** Runs `code` (an ES module body with `m`, the module) with TMPDIR at `base`; returns its stdout. */
  const node = (base: string, code: string) =>
    spawnSync(process.execPath, ['--input-type=module', '-e', `const m = await import(${JSON.stringify(MODULE)});\n${code}`], {
      env: { ...process.env, TMPDIR: base },
      encoding: 'utf8',
    });

  test('points TMPDIR into its folder and removes it when the process exits without closing (Ctrl-C in vitest)', () => {
    const base = mkdtempSync(join(tmpdir(), 'svc-base-'));
    const r = node(
      base,
      `const { dir } = m.openRunTmp('test');
       const { mkdtempSync, writeFileSync } = await import('node:fs');
       const { tmpdir } = await import('node:os');
       writeFileSync(mkdtempSync(tmpdir() + '/svc-home-') + '/f', 'x');
       console.log(dir + ' ' + tmpdir());
       process.exit(3);`,
    );
    expect(r.status, r.stderr).toBe(3);
    const [dir, seen] = r.stdout.trim().split(' ');
    expect(seen).toBe(dir);
    expect(dirname(dir!)).toBe(base);
    expect(readdirSync(base)).toEqual([]);
  });

  test("a run killed before it could remove its folder: the next run's start removes it, and leaves a live run's", () => {
    const base = mkdtempSync(join(tmpdir(), 'svc-base-'));
    const killed = node(base, `m.openRunTmp('bench'); process.kill(process.pid, 'SIGKILL');`);
    expect(killed.signal).toBe('SIGKILL');
    const [left] = readdirSync(base);
    expect(left).toMatch(new RegExp(`^${runTmpPrefix('bench')}`));
    // A live run's folder (this process's own mark) and those whose owner is not written yet stay.
    const live = mkdtempSync(join(base, runTmpPrefix('test')));
    const start = readFileSync(`/proc/${process.pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[19];
    writeFileSync(join(live, RUN_TMP_OWNER), `${process.pid} ${start}\n`);
    const fresh = mkdtempSync(join(base, runTmpPrefix('test')));
    const halfWritten = mkdtempSync(join(base, runTmpPrefix('test')));
    writeFileSync(join(halfWritten, RUN_TMP_OWNER), '');
    const next = node(base, `const r = m.openRunTmp('test'); console.log(r.dir); r.close();`);
    expect(next.status, next.stderr).toBe(0);
    expect(readdirSync(base).sort()).toEqual([basename(live), basename(fresh), basename(halfWritten)].sort());
  });
});
