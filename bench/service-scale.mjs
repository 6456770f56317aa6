// 4. The local service at scale: 50,000 work items shaped like a long-lived backlog (epics of
// stories and tasks with sub-tasks, bugs with sub-tasks, most of it done, some of it blocked),
// created through the admin API with contract-valid fields only. Timed as HTTP round trips on
// loopback: the ready lanes with a write to items, links or sprints before every request (the case
// a live team hits: the ready set is maintained on write, nothing is reused from the last answer),
// the list pages and the filtered list (warm, interleaved, medians). Counts are compared with SQL.
// Throughput: 10 concurrent clients in another process, requests/s and the service's CPU per
// request. Then 100 appenders append to 100 runs at once, and every answer must be a 2xx.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { NODE, median, ms, row, startService } from './lib.mjs';

const ITEMS = Number(process.env.BENCH_ITEMS || 50_000);
const ROUNDS = 31;
const WARMUP = 3;
const APPENDERS = 100;
const APPENDS_EACH = 20;
const EVENTS_PER_APPEND = 10;
const CLIENTS = 10;
const LOAD_MS = 4000;

/** Creates ITEMS items; returns how long it took. Deterministic: the same backlog every run. */
export function seedBacklog(service) {
  const { admin, projectKey } = service;
  let made = 0;
  let n = 0;
  const make = (w) => {
    made++;
    return admin.createWorkItem({ projectKey, ...w }).key;
  };
  // Seven in ten items are done, one is in progress, two are to do.
  const status = () => {
    const i = n++ % 10;
    return i < 7 ? 'done' : i === 7 ? 'in_progress' : 'todo';
  };
  const priority = () => ['lowest', 'low', 'medium', 'high', 'highest'][n % 5];
  const t0 = performance.now();
  let blocker = null;
  for (let round = 0; made < ITEMS; round++) {
    if (round % 5 === 4) {
      // A bug with sub-tasks, and a lone bug.
      const bug = make({ kind: 'bug', title: `Bug ${made}`, status: status(), priority: priority(), type: 'code' });
      for (let i = 0; i < 4 && made < ITEMS; i++) make({ kind: 'subtask', parentKey: bug, title: `Fix step ${i}`, status: status(), type: 'code' });
      if (made < ITEMS) make({ kind: 'bug', title: `Lone bug ${made}`, status: status(), priority: priority(), type: 'code' });
      continue;
    }
    const epic = make({ kind: 'epic', title: `Epic ${made}`, status: status(), priority: priority() });
    for (let s = 0; s < 2 && made < ITEMS; s++) {
      const parent = make({ kind: s === 0 ? 'story' : 'task', parentKey: epic, title: `Story ${made}`, status: status(), priority: priority(), type: 'code' });
      for (let t = 0; t < 5 && made < ITEMS; t++) {
        // Every 50th sub-task waits on the one before it.
        const blocked = blocker && made % 50 === 0 ? { blockedBy: [blocker] } : {};
        blocker = make({ kind: 'subtask', parentKey: parent, title: `Step ${made}`, status: status(), priority: priority(), type: 'code', ...blocked });
      }
    }
  }
  return performance.now() - t0;
}

export async function serviceScale() {
  const service = await startService();
  try {
    const seedMs = seedBacklog(service);
    const db = () => service.db;
    const headers = { authorization: `Bearer ${service.token}` };
    const api = `${service.url}/api/v1/projects/${service.projectKey}`;
    const get = async (url) => {
      const res = await fetch(url, { headers });
      const body = await res.json();
      if (!res.ok) throw new Error(`GET ${url}: ${res.status} ${JSON.stringify(body)}`);
      return body;
    };

    // Page 20 of the list: follow the cursors once, then time that page like the others.
    let cursor = null;
    for (let i = 1; i < 20; i++) cursor = (await get(`${api}/work-items?limit=50${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)).nextCursor;
    const filter = encodeURIComponent('kind:bug -status:done');
    const cases = {
      'work-items, first page of 50': `${api}/work-items?limit=50`,
      'work-items, page 20 (cursor)': `${api}/work-items?limit=50&cursor=${encodeURIComponent(cursor)}`,
      'work-items, filtered (open bugs)': `${api}/work-items?limit=50&filter=${filter}`,
      'work-items/count, filtered': `${api}/work-items/count?filter=${filter}`,
    };
    const times = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
    for (let i = 0; i < WARMUP + ROUNDS; i++) {
      for (const [name, url] of Object.entries(cases)) {
        const t0 = performance.now();
        await get(url);
        if (i >= WARMUP) times[name].push(performance.now() - t0);
      }
    }

    // The lanes with a write before every request, turn by turn to an item (a status that moves
    // it in or out of the ready set), a blocks link (added, then removed) and a sprint (its state).
    const { admin, projectKey } = service;
    const bugKeys = db()
      .prepare(`SELECT key FROM work_items WHERE kind = 'bug' AND status <> 'done' ORDER BY rowid LIMIT 40`)
      .all()
      .map((r) => r.key);
    const sprint = admin.createSprint({ projectKey, name: 'bench sprint', state: 'future' }).id;
    let w = 0;
    const write = () => {
      const k = bugKeys[w % bugKeys.length];
      const turn = w++ % 3;
      if (turn === 0) admin.setStatus(k, w % 2 ? 'in_progress' : 'todo');
      else if (turn === 1) (w % 2 ? admin.addLink : admin.removeLink)(bugKeys[(w + 1) % bugKeys.length], k, 'blocks');
      else admin.setSprintState(sprint, w % 2 ? 'active' : 'future');
    };
    const lanes = { 'ready/bugs': `${api}/ready/bugs`, 'ready/containers': `${api}/ready/containers` };
    const afterWrite = { 'ready/bugs': [], 'ready/containers': [] };
    for (let i = 0; i < WARMUP + ROUNDS; i++) {
      for (const [lane, url] of Object.entries(lanes)) {
        write();
        const t0 = performance.now();
        await get(url);
        if (i >= WARMUP) afterWrite[lane].push(performance.now() - t0);
      }
    }

    const load = {
      'GET /work-items/KEY': `${service.url}/api/v1/work-items/${bugKeys[0]}`,
      'GET ready/bugs': `${api}/ready/bugs`,
    };
    const throughput = {};
    for (const [name, url] of Object.entries(load)) throughput[name] = await underLoad(url, service.token);

    const total = db().prepare('SELECT COUNT(*) AS n FROM work_items').get().n;
    const counted = (await get(`${api}/work-items/count`)).count;
    const openBugsSql = db().prepare(`SELECT COUNT(*) AS n FROM work_items WHERE kind = 'bug' AND status <> 'done' AND archived_at IS NULL`).get().n;
    const openBugs = (await get(`${api}/work-items/count?filter=${filter}`)).count;

    const appenders = await concurrentAppenders(service);

    return [
      row('work items created (admin API)', `${total} in ${(seedMs / 1000).toFixed(1)} s`, `${ITEMS}`, total === ITEMS),
      ...Object.entries(afterWrite).map(([lane, t]) =>
        row(
          `${lane}, a write before each request, median round trip`,
          ms(median(t)),
          '≤ 20 ms',
          median(t) <= 20,
          "writes in turn: an item's status, a blocks link, a sprint's state",
        ),
      ),
      ...Object.entries(times).map(([name, t]) => row(`${name}, median round trip`, ms(median(t)), '≤ 20 ms', median(t) <= 20)),
      ...Object.entries(throughput).map(([name, t]) =>
        row(
          `${name}, ${CLIENTS} concurrent clients`,
          `${Math.round(t.rps)} req/s, ${t.cpuMsPerRequest.toFixed(2)} ms CPU/request`,
          'report',
          t.errors === 0 ? null : false,
          `${t.requests} requests in ${(t.ms / 1000).toFixed(1)} s, ${t.errors} errors; CPU of the service process`,
        ),
      ),
      row('count = SQL: all items / open bugs', `${counted} = ${total} / ${openBugs} = ${openBugsSql}`, 'exact', counted === total && openBugs === openBugsSql),
      row(
        `${APPENDERS} concurrent appenders × ${APPENDS_EACH} appends × ${EVENTS_PER_APPEND} events: errors`,
        `${appenders.errors} errors, ${appenders.stored} of ${appenders.expected} events stored in ${(appenders.ms / 1000).toFixed(1)} s`,
        '0 errors, all stored',
        appenders.errors === 0 && appenders.stored === appenders.expected,
        `${Math.round((APPENDERS * APPENDS_EACH) / (appenders.ms / 1000))} appends/s; p50 ${ms(appenders.p50)}`,
      ),
    ];
  } finally {
    await service.close();
  }
}

/** Opens one run per appender (one card each), then all append at once, each batch after the last. */
async function concurrentAppenders(service) {
  const headers = { authorization: `Bearer ${service.token}`, 'content-type': 'application/json' };
  const post = (path, body) => fetch(`${service.url}/api/v1${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
  const runs = [];
  for (let i = 0; i < APPENDERS; i++) {
    const key = service.admin.createWorkItem({ projectKey: service.projectKey, kind: 'task', type: 'code', title: `Appender ${i}` }).key;
    const res = await post('/dispatch-runs', {
      projectKey: service.projectKey,
      command: 'run',
      origin: 'local',
      agent: 'bench',
      idempotencyKey: `bench-${i}`,
      cards: [{ workItemKey: key }],
    });
    if (res.status !== 201 && res.status !== 200) throw new Error(`open run: ${res.status} ${await res.text()}`);
    runs.push({ id: (await res.json()).run.id, key });
  }
  let errors = 0;
  const latencies = [];
  const t0 = performance.now();
  await Promise.all(
    runs.map(async ({ id, key }) => {
      for (let a = 0; a < APPENDS_EACH; a++) {
        const events = Array.from({ length: EVENTS_PER_APPEND }, (_, e) => ({ workItemKey: key, body: `appender ${id} batch ${a} event ${e}\n` }));
        const s = performance.now();
        const res = await post(`/dispatch-runs/${id}/events`, { events }).catch(() => null);
        latencies.push(performance.now() - s);
        if (!res || res.status >= 300) errors++;
        await res?.arrayBuffer();
      }
    }),
  );
  const elapsed = performance.now() - t0;
  const stored = service.db
    .prepare(`SELECT COUNT(*) AS n FROM dispatch_events WHERE run_id IN (SELECT value FROM json_each(?))`)
    .get(JSON.stringify(runs.map((r) => r.id))).n;
  return { errors, stored, expected: APPENDERS * APPENDS_EACH * EVENTS_PER_APPEND, ms: elapsed, p50: median(latencies) };
}

/**
 * CLIENTS keep-alive clients in another process request `url` for LOAD_MS; this process (the
 * service's, otherwise idle meanwhile) measures its own CPU over the same time.
 */
async function underLoad(url, token) {
  const script = `
const [url, token, clients, ms] = [process.argv[1], process.argv[2], Number(process.argv[3]), Number(process.argv[4])];
let requests = 0, errors = 0;
const until = performance.now() + ms;
const t0 = performance.now();
await Promise.all(Array.from({ length: clients }, async () => {
  while (performance.now() < until) {
    const res = await fetch(url, { headers: { authorization: 'Bearer ' + token } }).catch(() => null);
    if (!res || !res.ok) errors++;
    await res?.arrayBuffer();
    requests++;
  }
}));
console.log(JSON.stringify({ requests, errors, ms: performance.now() - t0 }));`;
  const child = spawn(NODE, ['--input-type=module', '-e', script, url, token, String(CLIENTS), String(LOAD_MS)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  const cpu0 = process.cpuUsage();
  await once(child, 'close');
  const cpu = process.cpuUsage(cpu0);
  const r = JSON.parse(out);
  return { ...r, rps: r.requests / (r.ms / 1000), cpuMsPerRequest: (cpu.user + cpu.system) / 1000 / r.requests };
}
