// 5. Hosted runners with Podman (or Docker: SVC_BENCH_ENGINE=docker): the local service (built, in
// this process) with `--hosted-executor ENGINE` and the runner image (npm run image; SVC_IMAGE_TAG
// names another). A burst of RUNS hosted runs is
// opened at once, each over its own card of a repository in the service's git remote, with a no-op
// agent (`true`, on `chore` cards that expect no commit). Measured: for each run, the time from its
// open (openDispatchRun answered) to the runner's first event stored by the service (the run's `seq` ≥ 1:
// the container started, svc attach read its run, cloned and reported its first leg) and, for the
// run alone, to its close (its agent run as a reserved uid, svc/KEY pushed), and how many
// runs the executor starts per minute: RUNS over the time from the first open to the last first
// event. Every run must end `succeeded` with its runner's exit 0, or the rows fail.
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, git, median, row, tempDir } from './lib.mjs';

const RUNS = 6;
const IMAGE = process.env.SVC_IMAGE_TAG || `localhost/svc:${JSON.parse((await import('node:fs')).readFileSync(join(ROOT, 'package.json'), 'utf8')).version}`;
const ENGINE = process.env.SVC_BENCH_ENGINE || 'podman';
const GOAL_FIRST_EVENT_MS = 5_000;
const GOAL_PER_MINUTE = 20;

async function api(service, method, path, body) {
  const res = await fetch(`${service.url}/api/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${service.seeded.token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

export async function hosted() {
  const env = { ...process.env };
  if (ENGINE === 'podman') env.CONTAINERS_CONF ??= join(ROOT, 'containers.conf');
  const inspect = spawnSync(ENGINE, ['image', 'inspect', '--format', '{{.Id}}', IMAGE], { env, encoding: 'utf8' });
  if (inspect.error || inspect.status !== 0)
    throw new Error(`${ENGINE} or the image ${IMAGE} is missing (npm run image): ${inspect.error?.message ?? inspect.stderr.trim()}`);

  // The service's git remote: acme/bench, one commit on main.
  const gitRoot = tempDir('hosted-git');
  const bare = join(gitRoot, 'acme', 'bench.git');
  mkdirSync(bare, { recursive: true });
  git(bare, 'init', '-q', '--bare', '-b', 'main');
  const seed = tempDir('hosted-seed');
  git(seed, 'init', '-q', '-b', 'main');
  git(seed, '-c', 'user.name=bench', '-c', 'user.email=bench@example.invalid', 'commit', '-q', '--allow-empty', '-m', 'init');
  git(seed, 'push', '-q', bare, 'main');

  const { startServer } = await import(join(ROOT, 'dist', 'server.js'));
  const logDir = tempDir('hosted-logs');
  const service = await startServer({
    seed: 'demo',
    // The bench polls every run every 50 ms with one token: the default 600/60 would stop it.
    config: { gitRoot, rateLimit: 1_000_000 },
    logError: (line) => process.stderr.write(`bench: ${line}\n`),
    hosted: { engine: ENGINE, image: IMAGE, agentCmd: 'true', logDir, env },
  });
  try {
    const keys = [];
    for (let i = 0; i <= RUNS; i++) {
      const made = await api(service, 'POST', '/projects/DEMO/work-items', {
        kind: 'task',
        type: 'chore',
        title: `Bench chore ${i}`,
        targetRepositories: ['acme/bench'],
      });
      keys.push((made.item ?? made).key);
    }
    const open = async (key) => {
      const r = await api(service, 'POST', '/dispatch-runs', {
        projectKey: 'DEMO',
        command: 'run',
        origin: 'hosted',
        agent: 'custom',
        cards: [{ workItemKey: key }],
      });
      return { id: r.run.id, openedAt: performance.now() };
    };
    // One run alone first (nothing else starting), then the burst.
    const solo = await open(keys.pop());
    const firstEvent = new Map();
    const ended = new Map();
    const closedAt = new Map();
    const deadline = Date.now() + 10 * 60_000;
    const watch = async (runs) => {
      for (const run of runs) {
        if (ended.has(run.id)) continue;
        const r = await api(service, 'GET', `/dispatch-runs/${run.id}`);
        if (r.seq >= 1 && !firstEvent.has(run.id)) firstEvent.set(run.id, performance.now());
        if (r.status !== 'running' && !closedAt.has(run.id)) closedAt.set(run.id, performance.now());
        if (r.status !== 'running' && r.agentInstance?.endedAt) ended.set(run.id, r);
      }
      await new Promise((done) => setTimeout(done, 50));
    };
    while (!ended.has(solo.id) && Date.now() < deadline) await watch([solo]);
    const soloOk = ended.get(solo.id)?.status === 'succeeded' && firstEvent.has(solo.id);
    const soloWait = firstEvent.get(solo.id) - solo.openedAt;
    const soloClosed = closedAt.get(solo.id) - solo.openedAt;
    ended.clear();
    firstEvent.clear();
    const t0 = performance.now();
    const opened = await Promise.all(keys.map(open));
    while (ended.size < RUNS && Date.now() < deadline) await watch(opened);
    const good = [...ended.values()].filter((r) => r.status === 'succeeded' && r.agentInstance?.exitCode === 0).length;
    const waits = opened.filter((r) => firstEvent.has(r.id)).map((r) => firstEvent.get(r.id) - r.openedAt);
    const lastFirst = Math.max(...firstEvent.values());
    const perMinute = firstEvent.size === RUNS ? (RUNS / (lastFirst - t0)) * 60_000 : 0;
    const all = good === RUNS && waits.length === RUNS;
    const note = `${RUNS} runs opened at once; ${good} of ${RUNS} ended succeeded with the runner's exit 0`;
    return [
      row(
        "open → runner's first event, one run alone",
        `${(soloWait / 1000).toFixed(1)} s`,
        `≤ ${GOAL_FIRST_EVENT_MS / 1000} s`,
        soloOk && soloWait <= GOAL_FIRST_EVENT_MS,
      ),
      row('open → run closed, one run alone', `${(soloClosed / 1000).toFixed(1)} s`, '(shown)', null, `${ENGINE}; its agent a reserved uid of the runner`),
      row(
        "open → runner's first event, median of the burst",
        `${(median(waits) / 1000).toFixed(1)} s`,
        `≤ ${GOAL_FIRST_EVENT_MS / 1000} s`,
        all && median(waits) <= GOAL_FIRST_EVENT_MS,
        note,
      ),
      row("open → runner's first event, slowest of the burst", `${(Math.max(...waits) / 1000).toFixed(1)} s`, '(shown)', null),
      row(
        'hosted runs started per minute (burst)',
        perMinute.toFixed(0),
        `≥ ${GOAL_PER_MINUTE}`,
        all && perMinute >= GOAL_PER_MINUTE,
        `RUNS over first open → last first event, ${ENGINE === 'podman' ? 'Podman (runc)' : 'Docker'} on this machine`,
      ),
    ];
  } finally {
    await service.close();
  }
}
