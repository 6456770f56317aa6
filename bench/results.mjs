// bench/RESULTS.md as `npm run bench` writes it: the latest run of each group only, one section per
// group with the run's date, commit, machine (cores, CPU, Node) and load average before and after
// it, and a table of each figure with its measured value, its goal and PASS, FAIL or — (no goal).
// The verdict comes from the row's `pass` alone: a missed goal is FAIL, whatever else the row says.
// A run of some groups (`node bench/run.mjs fleet`) replaces only their sections; the others stay as
// their own runs left them, each with its own stamp (CONTRIBUTING.md, "The suites").
import { execFileSync } from 'node:child_process';
import os from 'node:os';

const HEAD = `# Benchmark results

Written by \`npm run bench\` (bench/results.mjs): edits by hand are overwritten. Each section is the
latest run of its group, stamped with that run's date, commit, machine and load; a run of some
groups (\`node bench/run.mjs fleet\`) replaces only their sections. What each figure measures, and
notes on earlier runs: [bench/README.md](README.md).
`;

const open = (name) => `<!-- bench:${name} -->`;
const close = (name) => `<!-- /bench:${name} -->`;

/** The verdict of a row: its `pass` only (null: shown for context, never gates). */
export const verdict = (pass) => (pass === null ? '—' : pass ? 'PASS' : 'FAIL');

/** A table cell: one line, its pipes escaped. */
const cell = (value) =>
  String(value)
    .replace(/\s*\n\s*/g, ' ')
    .replaceAll('|', '\\|');

/** A 1-minute load average; null where a run did not record it (the page converted from the hand-kept one). */
const load = (value) => (value === null || value === undefined ? 'not recorded' : value.toFixed(2));

/** `2026-12-01 23:50–23:58 UTC`, to the minute; the end's date too when it is another day. */
function span(start, end) {
  const at = (date) => date.toISOString().slice(0, 16).replace('T', ' ');
  return at(start).slice(0, 10) === at(end).slice(0, 10) ? `${at(start)}–${at(end).slice(11)} UTC` : `${at(start)} to ${at(end)} UTC`;
}

/**
 * The machine and the tree a run measured: cores, CPU, Node, and the commit (with a note when
 * the work tree had changes the commit does not hold).
 */
export function machineNow(root) {
  const git = (...args) => {
    try {
      return execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    } catch {
      return null;
    }
  };
  const dirty = git('status', '--porcelain', '--untracked-files=no');
  return {
    cores: os.cpus().length,
    cpu: os.cpus()[0]?.model?.trim() || 'unknown CPU',
    node: process.version,
    commit: git('rev-parse', '--short=12', 'HEAD'),
    dirty: Boolean(dirty),
  };
}

/**
 * One group's section. `section`: { name, title, rows, startedAt, endedAt, loadBefore, loadAfter }
 * (dates, and the 1-minute load averages before and after the group ran, or null); `machine` from machineNow.
 */
export function sectionText(section, machine) {
  const { rows } = section;
  const count = (pass) => rows.filter((r) => r.pass === pass).length;
  const at = machine.commit ? ` at \`${machine.commit}\`${machine.dirty ? ' with uncommitted changes' : ''}` : '';
  const stamp = [
    `${span(section.startedAt, section.endedAt)}${at}`,
    `${machine.cores} cores (${machine.cpu}), Node ${machine.node}`,
    `load average ${load(section.loadBefore)} before, ${load(section.loadAfter)} after`,
    `${count(true)} PASS, ${count(false)} FAIL, ${count(null)} without a goal`,
  ].join(' · ');
  const table = rows.map(
    (r) => `| ${cell(r.figure)}${r.note ? ` <br><sub>${cell(r.note)}</sub>` : ''} | ${cell(r.measured)} | ${cell(r.goal)} | ${verdict(r.pass)} |`,
  );
  return [
    open(section.name),
    `## ${section.title}`,
    '',
    stamp,
    '',
    '| figure | measured | goal | result |',
    '|---|---|---|---|',
    ...table,
    close(section.name),
  ].join('\n');
}

/** The sections a page holds, by group name, as written (markers included). */
export function sectionsOf(page) {
  const found = new Map();
  for (const m of (page ?? '').matchAll(/<!-- bench:([\w-]+) -->[\s\S]*?<!-- \/bench:\1 -->/g)) found.set(m[1], m[0]);
  return found;
}

/**
 * The whole page after a run: `order` is every group's name in the page's order, `ran` the
 * sections this run measured. A group the run did not measure keeps its section from `previous`
 * (the page as it was, or null); a full run measures every group, so nothing old remains.
 */
export function resultsPage(previous, order, ran, machine) {
  const kept = sectionsOf(previous);
  const fresh = new Map(ran.map((s) => [s.name, sectionText(s, machine)]));
  const body = order.map((name) => fresh.get(name) ?? kept.get(name)).filter(Boolean);
  const verdicts = body.join('\n').match(/ \| (PASS|FAIL|—) \|$/gm) ?? [];
  const n = (v) => verdicts.filter((x) => x.includes(v)).length;
  const summary = `On this page: ${n('PASS')} PASS, ${n('FAIL')} FAIL, ${n('—')} without a goal (${verdicts.length} figures).`;
  return `${HEAD}\n${summary}\n\n${body.join('\n\n')}\n`;
}
