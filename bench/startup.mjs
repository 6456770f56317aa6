// 1. Start-up of real commands, no canned paths: `svc config get project`, `svc items list --json`
// against the local service, and `svc --help` on a pseudo-terminal (through script(1)), beside
// `node -e 0`, Debian's `gh config get editor` (the same kind of command: read a setting, no
// network) and, for items list, a bare Node script making the same GET (agents/bare-get.mjs), all
// in interleaved rounds (one of each per round, so a noisy moment hits all alike), medians
// compared. The service runs in a worker thread here, so it answers while this thread
// waits for each command. svc is started as a user's shell starts it, bin/svc.js as the program:
// its shell preamble execs the package's Node (node_modules/node, CONTRIBUTING.md#toolchain), the
// one `npm run bench` runs this file and `node -e 0` on, so each figure includes that preamble.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { BIN, NODE, ROOT, median, ms, row, svcEnv, tempDir, timed, x } from './lib.mjs';

const ROUNDS = 21;
const BARE_GET = join(import.meta.dirname, 'agents', 'bare-get.mjs');
const WARMUP = 3; // fills the compile cache and the page cache

/** The local service in a worker thread: its URL and a token for project BENCH. */
async function serviceInWorker() {
  const worker = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads');
     import(workerData).then(async ({ startServer }) => {
       const s = await startServer({ logError: () => {} });
       const ws = s.admin.createWorkspace({ name: 'Bench', slug: 'bench' });
       const user = s.admin.createUser({ name: 'Bench', email: 'bench@example.invalid' });
       s.admin.addMember(ws.id, user.id);
       s.admin.createProject({ workspaceId: ws.id, key: 'BENCH', name: 'Bench' });
       for (let i = 0; i < 50; i++) s.admin.createWorkItem({ projectKey: 'BENCH', kind: 'task', type: 'code', title: 'Item ' + i });
       const { token } = s.admin.createToken({ workspaceId: ws.id, userId: user.id });
       parentPort.postMessage({ url: s.url, token });
       parentPort.on('message', () => s.close().then(() => process.exit(0)));
     });`,
    { eval: true, workerData: join(ROOT, 'dist', 'server.js') },
  );
  const info = await new Promise((done, fail) => {
    worker.once('message', done);
    worker.once('error', fail);
  });
  return { ...info, close: () => worker.postMessage('close') };
}

const which = (cmd) => spawnSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' }).stdout.trim() || null;
/** `script -qc CMD /dev/null`: CMD on a pseudo-terminal, as a user's shell runs it. */
const onPty = (cmd) => ['script', ['-qec', cmd, '/dev/null']];
const q = (s) => `'${s.replaceAll("'", "'\\''")}'`;

export async function startup() {
  // The ratios to `node -e 0` compare like with like only if that is the Node the preamble execs.
  const svcNode = join(dirname(BIN), '..', 'node_modules', 'node', 'bin', 'node');
  if (existsSync(svcNode) && realpathSync(svcNode) !== realpathSync(NODE))
    throw new Error(`bin/svc.js runs on ${realpathSync(svcNode)}, this on ${NODE}: run the benchmarks with npm run bench`);
  const service = await serviceInWorker();
  try {
    const env = svcEnv({ url: service.url, token: service.token, projectKey: 'BENCH' });
    env.COLUMNS = '100';
    env.GH_CONFIG_DIR = join(tempDir('gh'), 'config');
    mkdirSync(env.GH_CONFIG_DIR, { recursive: true });
    const gh = which('gh');
    const hasScript = which('script') !== null;
    const cases = {
      node: [NODE, ['-e', '0']],
      configGet: [BIN, ['config', 'get', 'project']],
      itemsList: [BIN, ['items', 'list', '--json']],
      bareGet: [NODE, [BARE_GET, service.url, service.token, 'BENCH']],
      ...(hasScript ? { helpPty: onPty(`${q(BIN)} --help`) } : {}),
      ...(gh ? { gh: [gh, ['config', 'get', 'editor']] } : {}),
      ...(gh && hasScript ? { ghPty: onPty(`${q(gh)} config get editor`) } : {}),
    };
    const times = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
    for (let i = 0; i < WARMUP + ROUNDS; i++) {
      for (const [name, [cmd, args]] of Object.entries(cases)) {
        const r = timed(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
        if (r.status !== 0) throw new Error(`${[cmd, ...args].join(' ')} exited ${r.status}: ${r.stderr}${r.stdout.slice(0, 500)}`);
        if ((name === 'itemsList' || name === 'bareGet') && i === 0 && [JSON.parse(r.stdout)].flat().flatMap((d) => d.items ?? [d]).length !== 50)
          throw new Error(`svc items list --json did not list 50 items: ${r.stdout.slice(0, 300)}`);
        if (i >= WARMUP) times[name].push(r.wallMs);
      }
    }
    const m = Object.fromEntries(Object.entries(times).map(([k, t]) => [k, median(t)]));
    const noGh = "gh is not installed: apt-get install -y gh (Debian's package), then run again";
    const vsGh = (label, mine, theirs, how) =>
      gh && m[theirs] !== undefined && m[mine] !== undefined
        ? row(`${label} ÷ gh config get editor (${how})`, `${x(m[mine] / m[theirs])} (${ms(m[mine])} vs ${ms(m[theirs])})`, '≤ 1.00×', m[mine] <= m[theirs])
        : row(
            `${label} ÷ gh config get editor (${how})`,
            m[mine] === undefined ? 'script(1) missing' : 'gh missing',
            '≤ 1.00×',
            false,
            gh ? 'script(1) is in util-linux' : noGh,
          );
    // The machine may be shared: the load beside each figure says how quiet the run was.
    const load = `load average ${os.loadavg()[0].toFixed(1)} after the rounds (${os.cpus().length} CPUs)`;
    const rows = [
      row(
        'svc config get project ÷ node -e 0 (median wall)',
        `${x(m.configGet / m.node)} (${ms(m.configGet)} vs ${ms(m.node)})`,
        '≤ 1.50×',
        m.configGet <= 1.5 * m.node,
      ),
      vsGh('svc config get project', 'configGet', 'gh', 'pipe'),
      row(
        'svc items list --json (local service, 50 items) ÷ a bare Node script making the same GET',
        `${x(m.itemsList / m.bareGet)} (${ms(m.itemsList)} vs ${ms(m.bareGet)})`,
        '≤ 1.20×',
        m.itemsList <= 1.2 * m.bareGet,
        'bench/agents/bare-get.mjs: node:http, the token as a bearer, the items printed as JSON',
      ),
      vsGh('svc --help on a pseudo-terminal', 'helpPty', 'ghPty', 'both on a pty'),
      row('svc --version ÷ node -e 0, for context (bin/svc.js answers it from package.json)', versionRatio(m.node), 'context', null),
    ];
    for (const r of rows) r.note = r.note ? `${r.note}; ${load}` : load;
    return rows;
  } finally {
    service.close();
  }
}

function versionRatio(nodeMs) {
  const t = [];
  for (let i = 0; i < 7; i++) t.push(timed(BIN, ['--version']).wallMs);
  return `${x(median(t) / nodeMs)} (${ms(median(t))}; measured after the rounds)`;
}

export const hasGh = () => existsSync('/usr/bin/gh') || which('gh') !== null;
