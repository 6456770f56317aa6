// `npm run bench`: builds (npm does), runs every benchmark (issues 7 and 13) against the built CLI and
// local service, prints each figure beside its goal and writes bench/RESULTS.md (bench/results.mjs:
// the latest run of each group, with its date, machine and load). Exits 1 when any figure FAILs,
// after printing all of them, so it can gate a release; never part of `npm test`.
//
//   node bench/run.mjs [startup] [per-card] [logs] [service] [hosted] [fleet] [fence] [attempts] [--markdown] [--no-write]
//
// A run of some groups rewrites only their sections of RESULTS.md. `--no-write` (and a run against
// another build, BENCH_BIN or BENCH_SERVER) leaves the file alone; a run cut short by its budget or
// Ctrl-C writes nothing.
//
// Each benchmark measures its figures side by side in one run (ratios and counts, never absolute
// times against a fixed machine). Requests go to loopback only; every loop is bounded; the whole
// run is capped at BUDGET_MS and temporary folders are removed at the end: each benchmark's own
// (lib.mjs cleanup), and the run's temp folder (scripts/run-tmp.mjs) with whatever svc made there.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { openRunTmp } from '../scripts/run-tmp.mjs';
import { ROOT, cleanup, row } from './lib.mjs';
import { machineNow, resultsPage, sectionText, verdict } from './results.mjs';
import { fence } from './fence.mjs';
import { attempts } from './attempts.mjs';
import { fleet } from './fleet.mjs';
import { hosted } from './hosted.mjs';
import { logStreaming } from './log-streaming.mjs';
import { perCard } from './per-card.mjs';
import { serviceScale } from './service-scale.mjs';
import { startup } from './startup.mjs';

const BENCHMARKS = {
  startup: { title: '1. Start-up', run: startup },
  'per-card': { title: '2. Per-card overhead (100 cards, worktrees, no-op agent)', run: perCard },
  logs: { title: '3. Log pipeline', run: logStreaming },
  service: { title: '4. The local service at 50,000 work items', run: serviceScale },
  hosted: { title: `5. Hosted runners with ${process.env.SVC_BENCH_ENGINE === 'docker' ? 'Docker' : 'Podman'} (npm run image first)`, run: hosted },
  fleet: { title: '6. A fleet: N workers, 64 cards of 2 s each', run: fleet },
  fence: { title: "7. The egress fence: a leg's allowed host, fenced vs open (root)", run: fence },
  attempts: { title: '8. Best-of-N: --attempts 4 on one card vs 4 cards', run: attempts },
};
const BUDGET_MS = 30 * 60_000;

const args = process.argv.slice(2);
const markdown = args.includes('--markdown');
const otherBuild = Boolean(process.env.BENCH_BIN || process.env.BENCH_SERVER);
const write = !args.includes('--no-write') && !otherBuild;
const picked = args.filter((a) => !a.startsWith('--'));
for (const name of picked) if (!BENCHMARKS[name]) throw new Error(`unknown benchmark ${name} (known: ${Object.keys(BENCHMARKS).join(', ')})`);
if (!existsSync(join(ROOT, 'dist', 'cli.js')) || !existsSync(join(ROOT, 'dist', 'server.js'))) {
  throw new Error('dist/ is missing: run `npm run bench` (it builds first)');
}

// Made before any benchmark runs: their modules make nothing in the temp folder as they load. The
// exit handler removes it on every way out, the watchdog's exit and a thrown error included.
const runTmp = openRunTmp('bench');
// Ctrl-C: Node's default would end the process without its exit handlers.
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => process.exit(128 + os.constants.signals[signal]));

const watchdog = setTimeout(() => {
  process.stderr.write(`bench: still running after ${BUDGET_MS / 60_000} min; giving up\n`);
  cleanup();
  process.exit(1);
}, BUDGET_MS);
watchdog.unref();

const sections = [];
for (const [name, b] of Object.entries(BENCHMARKS)) {
  if (picked.length && !picked.includes(name)) continue;
  process.stderr.write(`bench: ${b.title}…\n`);
  const t0 = performance.now();
  const startedAt = new Date();
  const loadBefore = os.loadavg()[0];
  let rows;
  try {
    rows = await b.run();
  } catch (error) {
    rows = [row(`${name}: the benchmark could not run`, String(error?.message ?? error).split('\n')[0], 'runs', false)];
  } finally {
    cleanup();
  }
  process.stderr.write(`bench: ${b.title} done in ${((performance.now() - t0) / 1000).toFixed(0)} s\n`);
  sections.push({ name, title: b.title, rows, startedAt, endedAt: new Date(), loadBefore, loadAfter: os.loadavg()[0] });
}
clearTimeout(watchdog);
runTmp.close();

const all = sections.flatMap((s) => s.rows);
const failed = all.filter((r) => r.pass === false);

const machine = machineNow(ROOT);
if (markdown) {
  console.log(sections.map((s) => sectionText(s, machine)).join('\n\n'));
} else {
  const width = (k) => Math.max(...all.map((r) => String(r[k]).length), k.length);
  const [wf, wm, wg] = [width('figure'), width('measured'), width('goal')];
  const line = (f, m, g, v) => `${f.padEnd(wf)}  ${m.padEnd(wm)}  ${g.padEnd(wg)}  ${v}`;
  console.log(line('figure', 'measured', 'goal', 'result'));
  for (const s of sections) {
    console.log(`\n${s.title}`);
    for (const r of s.rows) {
      console.log(line(r.figure, String(r.measured), r.goal, verdict(r.pass)));
      if (r.note) console.log(`  ↳ ${r.note}`);
    }
  }
}
console.log(
  `\n${all.filter((r) => r.pass === true).length} PASS, ${failed.length} FAIL, ${all.filter((r) => r.pass === null).length} reported without a goal (${all.length} figures; ${os.cpus().length} CPUs, ${os.cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}, load ${os.loadavg()[0].toFixed(1)} at the end)`,
);
process.exitCode = failed.length ? 1 : 0;
if (write) {
  const file = join(ROOT, 'bench', 'RESULTS.md');
  const previous = existsSync(file) ? readFileSync(file, 'utf8') : null;
  writeFileSync(file, resultsPage(previous, Object.keys(BENCHMARKS), sections, machine));
  process.stderr.write(
    `bench: wrote ${sections.length === Object.keys(BENCHMARKS).length ? 'every section' : `the sections of ${sections.map((s) => s.name).join(', ')}`} of bench/RESULTS.md\n`,
  );
} else if (otherBuild) {
  process.stderr.write('bench: BENCH_BIN or BENCH_SERVER measures another build: bench/RESULTS.md is left as it is\n');
}
