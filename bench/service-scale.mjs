// 4. The local service at scale: 50,000 work items shaped like a long-lived backlog (epics of
// stories and tasks with sub-tasks, bugs with sub-tasks, most of it done, some of it blocked), created through the
// admin API. The ready lanes and list pages are timed as HTTP round trips on loopback (warm,
// interleaved, medians; the lanes are cached until a write, so the first request after one is
// shown too); the count is compared with SQL over the same rows; then 100 appenders
// append to 100 runs at once, a bounded number of events each, and every answer must be a 2xx.
import { median, ms, row, startService } from './lib.mjs';

const ITEMS = 50_000;
const ROUNDS = 31;
const WARMUP = 3;
const APPENDERS = 100;
const APPENDS_EACH = 20;
const EVENTS_PER_APPEND = 10;

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
  const priority = () => ['low', 'medium', 'high', 'urgent'][n % 4];
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
      'ready/bugs (first page)': `${api}/ready/bugs`,
      'ready/containers (first page)': `${api}/ready/containers`,
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

    // The lanes are cached until a write changes what readiness is read from; after any write the
    // next request computes the ready set afresh. Shown for context: a write, then one request.
    const coldKey = `${service.projectKey}-1`; // an existing item: its title changes, the backlog stays
    const cold = { 'ready/bugs': [], 'ready/containers': [] };
    for (let i = 0; i < 7; i++) {
      for (const lane of Object.keys(cold)) {
        service.admin.setFields(coldKey, { title: `cold ${lane} ${i}` });
        const t0 = performance.now();
        await get(`${api}/${lane}`);
        cold[lane].push(performance.now() - t0);
      }
    }

    const db = service.db;
    const total = db.prepare('SELECT COUNT(*) AS n FROM work_items').get().n;
    const counted = (await get(`${api}/work-items/count`)).count;
    const openBugsSql = db.prepare(`SELECT COUNT(*) AS n FROM work_items WHERE kind = 'bug' AND status <> 'done' AND archived_at IS NULL`).get().n;
    const openBugs = (await get(`${api}/work-items/count?filter=${filter}`)).count;

    const appenders = await concurrentAppenders(service);

    return [
      row('work items created (admin API)', `${total} in ${(seedMs / 1000).toFixed(1)} s`, `${ITEMS}`, total === ITEMS),
      ...Object.entries(times).map(([name, t]) => row(`${name}, median round trip`, ms(median(t)), '≤ 20 ms', median(t) <= 20)),
      row(
        'ready/bugs / ready/containers right after a write, median',
        `${ms(median(cold['ready/bugs']))} / ${ms(median(cold['ready/containers']))}`,
        'context',
        null,
        'a write to items, links or sprints invalidates the cached lanes: this request computes the ready set',
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
    const res = await post('/dispatch-runs', { projectKey: service.projectKey, command: 'run', origin: 'local', agent: 'bench', idempotencyKey: `bench-${i}`, cards: [{ workItemKey: key }] });
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
