// 1. Start-up: `svc --version` and `svc --help` against `node -e 0` on the same Node, interleaved
// runs (one of each per round, so a noisy moment hits all three alike), medians compared. Output
// is read through a pipe, as a script or `$(svc --version)` would. Also counted: the files Node
// loads for `svc --version`, and whether the fast --help equals the full program's own help.
import { BIN, NODE, ROOT, median, ms, row, timed, x } from './lib.mjs';
import { join } from 'node:path';

const ROUNDS = 31;
const WARMUP = 3; // fills the compile cache and the page cache
// Counts the modules Node loads (other than its own), printed on exit.
const COUNT_LOADS = `import m from 'node:module';
const seen = new Set();
m.registerHooks({ load(url, ctx, next) { if (!url.startsWith('node:')) seen.add(url); return next(url, ctx); } });
process.on('exit', () => process.stderr.write('LOADED ' + seen.size + '\\n'));`;

export async function startup() {
  const cases = {
    node: [NODE, ['-e', '0']],
    version: [NODE, [BIN, '--version']],
    help: [NODE, [BIN, '--help']],
    // The whole program (what a terminal or any other command gets), for context: two flags
    // take it past the fast entry.
    program: [NODE, [BIN, '--no-color', '--help']],
  };
  const times = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
  for (let i = 0; i < WARMUP + ROUNDS; i++) {
    for (const [name, [cmd, args]] of Object.entries(cases)) {
      const r = timed(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
      if (r.status !== 0) throw new Error(`${[cmd, ...args].join(' ')} exited ${r.status}: ${r.stderr}`);
      if (i >= WARMUP) times[name].push(r.wallMs);
    }
  }
  const base = median(times.node);
  const v = median(times.version) / base;
  const h = median(times.help) / base;
  const p = median(times.program) / base;

  const fast = timed(NODE, [BIN, '--help']).stdout;
  const full = timed(NODE, [join(ROOT, 'dist', 'main.js'), '--help']).stdout;
  const loads = (args) => {
    const r = timed(NODE, ['--import', `data:text/javascript,${encodeURIComponent(COUNT_LOADS)}`, ...args]);
    return /LOADED (\d+)/.exec(r.stderr)?.[1] ?? '?';
  };
  return [
    row('svc --version ÷ node -e 0 (median wall)', `${x(v)} (${ms(median(times.version))} vs ${ms(base)})`, '≤ 1.25×', v <= 1.25),
    row('svc --help ÷ node -e 0 (median wall)', `${x(h)} (${ms(median(times.help))})`, '≤ 1.25×', h <= 1.25),
    row('svc --help output = the program\'s own help', fast === full ? 'identical' : 'DIFFERENT', 'identical', fast === full),
    row('whole program (svc --no-color --help) ÷ node -e 0', `${x(p)} (${ms(median(times.program))})`, 'context', null, 'a terminal, and every other command, start here'),
    row('files loaded: svc --version / whole program', `${loads([BIN, '--version'])} / ${loads([BIN, '--no-color', '--version'])}`, 'context', null, 'modules other than Node\'s own'),
  ];
}
