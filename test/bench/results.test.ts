// bench/RESULTS.md as `npm run bench` writes it (bench/results.mjs), on a small made-up result set:
// the benchmarks themselves never run in the suite.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type BenchMachine, type BenchSection, machineNow, resultsPage, sectionText, sectionsOf } from '../../bench/results.mjs';

const ORDER = ['startup', 'per-card', 'logs'];
const MACHINE: BenchMachine = { cores: 2, cpu: 'Test CPU', node: 'v22.23.3', commit: '0123456789ab', dirty: false };

function section(name: string, over: Partial<BenchSection> = {}): BenchSection {
  return {
    name,
    title: `${ORDER.indexOf(name) + 1}. ${name}`,
    rows: [
      { figure: `${name} ratio`, measured: '1.10×', goal: '≤ 1.50×', pass: true },
      { figure: `${name} rate`, measured: '145 MB/s', goal: '≥ 200 MB/s', pass: false, note: 'beside two busy loops' },
      { figure: `${name} context`, measured: 12, goal: 'context', pass: null },
    ],
    startedAt: new Date('2026-12-01T23:50:10Z'),
    endedAt: new Date('2026-12-01T23:58:40Z'),
    loadBefore: 1.234,
    loadAfter: 0.4,
    ...over,
  };
}

describe("one group's section", () => {
  it('is stamped with the date, commit, machine, load before and after, and the counts', () => {
    const text = sectionText(section('logs'), MACHINE);
    expect(text.split('\n').slice(0, 4)).toEqual([
      '<!-- bench:logs -->',
      '## 3. logs',
      '',
      '2026-12-01 23:50–23:58 UTC at `0123456789ab` · 2 cores (Test CPU), Node v22.23.3 · load average 1.23 before, 0.40 after · 1 PASS, 1 FAIL, 1 without a goal',
    ]);
    expect(sectionText(section('logs'), { ...MACHINE, dirty: true })).toContain('at `0123456789ab` with uncommitted changes ·');
    const overnight = sectionText(section('logs', { endedAt: new Date('2026-12-02T00:03:00Z'), loadAfter: null }), MACHINE);
    expect(overnight).toContain('2026-12-01 23:50 to 2026-12-02 00:03 UTC');
    expect(overnight).toContain('load average 1.23 before, not recorded after');
  });

  it('has one table row per figure with its measured value and goal; a missed goal is FAIL, whatever the row says', () => {
    const s = section('logs');
    s.rows.push({ figure: 'says PASS | in its text', measured: 'PASS\nreally', goal: 'PASS', pass: false });
    const rows = sectionText(s, MACHINE)
      .split('\n')
      .filter((l) => l.startsWith('| '));
    expect(rows).toEqual([
      '| figure | measured | goal | result |',
      '| logs ratio | 1.10× | ≤ 1.50× | PASS |',
      '| logs rate <br><sub>beside two busy loops</sub> | 145 MB/s | ≥ 200 MB/s | FAIL |',
      '| logs context | 12 | context | — |',
      '| says PASS \\| in its text | PASS really | PASS | FAIL |',
    ]);
  });
});

describe('the page', () => {
  it('a full run writes every group in order, whatever was there, and counts the page', () => {
    const page = resultsPage('# hand-written\n\nold figures\n', ORDER, ORDER.map((n) => section(n)).reverse(), MACHINE);
    expect(page).not.toContain('old figures');
    expect([...sectionsOf(page).keys()]).toEqual(ORDER);
    expect(page).toMatch(/^# Benchmark results\n/);
    expect(page).toContain('\nOn this page: 3 PASS, 3 FAIL, 3 without a goal (9 figures).\n');
  });

  it('a run of one group replaces its section only; the others stay byte for byte, with their own stamps', () => {
    const before = resultsPage(
      null,
      ORDER,
      ORDER.map((n) => section(n)),
      MACHINE,
    );
    const again = section('per-card', {
      rows: [{ figure: 'per-card ratio', measured: '0.90×', goal: '≤ 1.50×', pass: true }],
      startedAt: new Date('2026-12-02T08:00:00Z'),
      endedAt: new Date('2026-12-02T08:01:00Z'),
    });
    const after = resultsPage(before, ORDER, [again], { ...MACHINE, commit: 'fedcba987654' });
    const [old, now] = [sectionsOf(before), sectionsOf(after)];
    expect([...now.keys()]).toEqual(ORDER);
    expect(now.get('startup')).toBe(old.get('startup'));
    expect(now.get('logs')).toBe(old.get('logs'));
    expect(now.get('per-card')).toContain('2026-12-02 08:00–08:01 UTC at `fedcba987654`');
    expect(now.get('per-card')).toContain('| per-card ratio | 0.90× | ≤ 1.50× | PASS |');
    expect(now.get('per-card')).not.toContain('per-card rate');
    expect(after).toContain('On this page: 3 PASS, 2 FAIL, 2 without a goal (7 figures).');
  });

  it('a group never run is absent, not an empty section; a page without sections keeps nothing', () => {
    const page = resultsPage('no markers here', ORDER, [section('logs')], MACHINE);
    expect([...sectionsOf(page).keys()]).toEqual(['logs']);
    expect(page).not.toContain('no markers here');
  });
});

describe('the machine', () => {
  it('is this one: its cores, its Node, the commit checked out (and whether the tree has changes)', () => {
    const repo = mkdtempSync(join(os.tmpdir(), 'svc-bench-machine-'));
    const git = (...args: string[]) => execFileSync('git', ['-C', repo, ...args], { encoding: 'utf8' }).trim();
    git('init', '-q', '-b', 'main');
    writeFileSync(join(repo, 'a.txt'), 'one\n');
    git('add', 'a.txt');
    git('-c', 'user.name=t', '-c', 'user.email=t@example.invalid', 'commit', '-qm', 'one');
    const m = machineNow(repo);
    expect(m).toEqual({
      cores: os.cpus().length,
      cpu: expect.any(String),
      node: process.version,
      commit: git('rev-parse', '--short=12', 'HEAD'),
      dirty: false,
    });
    writeFileSync(join(repo, 'a.txt'), 'two\n');
    expect(machineNow(repo).dirty).toBe(true);
    // Not a checkout (a tarball of the source): no commit to name.
    expect(machineNow(mkdtempSync(join(os.tmpdir(), 'svc-bench-plain-'))).commit).toBeNull();
  });
});
