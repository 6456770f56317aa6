// 3. Log pipeline: an agent printing 100 MB as fast as it can under `svc run` (agent stdout →
// redaction → local log), and under `svc run --send-logs` (→ journal → appends to the local
// service): the agent's own rate is svc's throughput. Then 100 MB at a steady 20 MB/s under
// `svc run --send-logs`, against the same agent writing into /dev/null. The agent (agents/print.mjs) prints at a steady rate and times itself,
// so "the agent is never blocked" reads directly as its own wall time. Appends are counted on the
// service's side; their batches are checked against the journal; svc's peak RSS is sampled from
// /proc. The same run goes once more through a proxy that makes every request take ten times as
// long, and once at 10 MB, to see memory stay flat. The unpaced runs (as fast as the agent can
// print) are made three times each, medians taken, on a quiet machine and again beside two busy
// loops (a loaded machine: on two cores, every core has a competitor).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import os from 'node:os';
import { readFileSync } from 'node:fs';
import { request, createServer, Agent } from 'node:http';
import { join } from 'node:path';
import { NODE, journalOf, makeRepo, mb, median, ms, row, runSvc, startService, summaryOf, svcEnv, tempDir, timed, x } from './lib.mjs';

const MB = 1024 * 1024;
const RATE = 20 * MB; // bytes/s: 100 MB in 5 s, far chattier than any real agent
const EVENTS_PER_APPEND = 200;
const MAX_BATCH_BYTES = 512 * 1024; // the event stream's cap on a batch (src/dispatch/wire/event-stream.ts)
const FLUSH_MS = 1000;
const PRINT = join(import.meta.dirname, 'agents', 'print.mjs');
/** The agent's rate in MB/s, from its wall time for the 100 MB it printed. */
const rateOf = (agentMs) => (100 / agentMs) * 1000;
const BARE_READER = join(import.meta.dirname, 'agents', 'bare-reader.mjs');

/** A proxy in front of the service that holds each answer until the request took `factor` × as long. */
async function slowProxy(target, factor) {
  const agent = new Agent({ keepAlive: true });
  const server = createServer((req, res) => {
    const t0 = performance.now();
    const up = request(`${target}${req.url}`, { method: req.method, headers: req.headers, agent }, (ans) => {
      const parts = [];
      ans.on('data', (d) => parts.push(d));
      ans.on('end', () => {
        setTimeout(
          () => {
            res.writeHead(ans.statusCode, ans.headers);
            res.end(Buffer.concat(parts));
          },
          (performance.now() - t0) * (factor - 1),
        );
      });
    });
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    close: () => {
      server.closeAllConnections();
      agent.destroy();
      return new Promise((done) => server.close(done));
    },
  };
}

/** The agent alone, into /dev/null: its own wall time. */
function alone(bytes, rate) {
  const file = join(tempDir('alone'), 'ms');
  const r = timed('sh', ['-c', `"${NODE}" "${PRINT}" ${bytes} ${rate} "${file}" > /dev/null`]);
  if (r.status !== 0) throw new Error(`agent alone failed: ${r.stderr}`);
  return Number(readFileSync(file, 'utf8'));
}

/** The agent under bench/agents/bare-reader.mjs, the floor of the pipeline: its own wall time. */
function underBareReader(bytes) {
  const dir = tempDir('bare');
  const r = timed(NODE, [BARE_READER, join(dir, 'log'), NODE, PRINT, String(bytes), '0', join(dir, 'ms')]);
  if (r.status !== 0) throw new Error(`bare reader failed: ${r.stderr}`);
  return Number(readFileSync(join(dir, 'ms'), 'utf8'));
}

/** The agent into `cat > file`: no Node and no scan on the reading side, the machine's own floor. */
function underCat(bytes) {
  const dir = tempDir('cat');
  const r = timed('sh', ['-c', `"${NODE}" "${PRINT}" ${bytes} 0 "${join(dir, 'ms')}" | cat > "${join(dir, 'log')}"`]);
  if (r.status !== 0) throw new Error(`agent into cat failed: ${r.stderr}`);
  return Number(readFileSync(join(dir, 'ms'), 'utf8'));
}

/** One `svc run --send-logs` of the agent; appends are counted by `counter`. */
async function underSvc(service, counter, bytes, rate, baseUrl, sendLogs = true) {
  const key = service.admin.createWorkItem({ projectKey: service.projectKey, kind: 'task', type: 'code', title: `logs ${bytes}` }).key;
  const file = join(tempDir('agent'), 'ms');
  const env = svcEnv(service, baseUrl ? { SVC_BASE_URL: baseUrl } : {});
  counter.n = 0;
  const agentCmd = `"${NODE}" "${PRINT}" ${bytes} ${rate} "${file}"`;
  const r = await runSvc(['run', key, '--agent-cmd', agentCmd, '--allow-empty', ...(sendLogs ? ['--send-logs'] : []), '--repo', makeRepo(), '--json'], {
    env,
    timeoutMs: 600_000,
  });
  const summary = summaryOf(r);
  if (summary.status !== 'succeeded') throw new Error(`svc run ended ${summary.status}: ${r.stderr.slice(-1000)}`);
  const stored = service.db
    .prepare('SELECT COUNT(*) AS n, COALESCE(SUM(length(CAST(body AS BLOB))), 0) AS bytes FROM dispatch_events WHERE run_id = ? AND body IS NOT NULL')
    .get(summary.runId);
  return {
    agentMs: Number(readFileSync(file, 'utf8')),
    peakRss: r.peakRss,
    cpuMs: r.cpuMs,
    wallMs: r.wallMs,
    appends: counter.n,
    stored,
    batches: batchesOf(env, summary.runId),
    summary,
  };
}

/**
 * The batches the run sent, read from its journal (each ack closes one), and how many of them
 * were not full: under 200 events while the next event would still have fitted in 512 KiB. Only
 * the last batch of a flush may be so.
 */
function batchesOf(env, runId) {
  const records = journalOf(env, runId);
  const events = records.filter(({ r }) => r.t === 'ev');
  const size = new Map(events.map(({ r, line }) => [r.n, Buffer.byteLength(line)]));
  const acks = records.filter(({ r }) => r.t === 'ack').map(({ r }) => r.n);
  let from = 0;
  let short = 0;
  for (const to of acks) {
    let bytes = 0;
    for (let n = from + 1; n <= to; n++) bytes += size.get(n) ?? 0;
    const next = size.get(to + 1);
    if (to - from < EVENTS_PER_APPEND && next !== undefined && bytes + next <= MAX_BATCH_BYTES) short++;
    from = to;
  }
  return { acks: acks.length, short, events: events.length };
}

/** Two processes spinning on the CPU for as long as `fn` runs. */
async function besideBusyLoops(fn) {
  const loops = [0, 1].map(() => spawn(NODE, ['-e', 'for (;;);'], { stdio: 'ignore' }));
  try {
    return await fn();
  } finally {
    for (const loop of loops) loop.kill('SIGKILL');
    await Promise.all(loops.map((loop) => (loop.exitCode === null && loop.signalCode === null ? once(loop, 'exit') : null)));
  }
}

/**
 * Three unpaced 100 MB runs: the one of median rate, and the load average seen after them. With
 * `floor`, each is followed by the same agent under the bare reader, so both see the same machine.
 */
async function unpacedRuns(service, counter, sendLogs, floor = false) {
  const runs = [];
  const bare = [];
  const cat = [];
  for (let i = 0; i < 3; i++) {
    runs.push(await underSvc(service, counter, 100 * MB, 0, undefined, sendLogs));
    if (floor) bare.push(underBareReader(100 * MB));
    if (floor) cat.push(underCat(100 * MB));
  }
  const mid = runs.sort((a, b) => a.agentMs - b.agentMs)[1];
  const toRate = (agentMs) => rateOf(agentMs).toFixed(0);
  return {
    ...mid,
    rates: runs.map((r) => toRate(r.agentMs)),
    load: os.loadavg()[0],
    floorRates: bare.map(toRate),
    floorMs: median(bare),
    catRates: cat.map(toRate),
    catMs: median(cat),
  };
}

export async function logStreaming() {
  const counter = { n: 0 };
  const service = await startService({
    start: { onResponse: (info) => info.operationId === 'appendDispatchEvents' && info.status === 200 && counter.n++ },
  });
  try {
    const base100 = alone(100 * MB, RATE);
    const floor = await underSvc(service, counter, 0, RATE);
    const big = await underSvc(service, counter, 100 * MB, RATE);
    const small = await underSvc(service, counter, 10 * MB, RATE);
    const proxy = await slowProxy(service.url, 10);
    let slow;
    try {
      slow = await underSvc(service, counter, 100 * MB, RATE, proxy.url);
    } finally {
      await proxy.close();
    }
    const base100b = alone(100 * MB, RATE);
    const baseMs = Math.min(base100, base100b);
    const unpacedAlone = alone(100 * MB, 0);
    const unpaced = await unpacedRuns(service, counter, true);
    const unpacedLocal = await unpacedRuns(service, counter, false, true);
    const [loaded, loadedLocal] = await besideBusyLoops(async () => [
      await unpacedRuns(service, counter, true),
      await unpacedRuns(service, counter, false, true),
    ]);
    const rate = (run) => rateOf(run.agentMs);
    const runs = (run) => `median of ${run.rates.join(', ')} MB/s; load average ${run.load.toFixed(1)} after them (${os.cpus().length} CPUs)`;

    const wall = big.agentMs / baseMs;
    const slowWall = slow.agentMs / baseMs;
    const flat = big.peakRss / small.peakRss;
    const slowFlat = slow.peakRss / big.peakRss;
    const maxShort = Math.ceil(big.agentMs / FLUSH_MS) + 2;
    const fewest = Math.ceil(big.batches.events / EVENTS_PER_APPEND);
    return [
      row('agent wall with --send-logs ÷ into /dev/null (100 MB at 20 MB/s)', `${x(wall)} (${ms(big.agentMs)} vs ${ms(baseMs)})`, '≤ 1.1×', wall <= 1.1),
      row('appends counted by the service = batches in the journal', `${big.appends} = ${big.batches.acks}`, 'equal', big.appends === big.batches.acks),
      row(
        'appends not full (< 200 events and < 512 KiB)',
        `${big.batches.short} of ${big.appends}`,
        `≤ ${maxShort} (one per flush)`,
        big.batches.short <= maxShort,
        `${big.batches.events} events; ⌈events/200⌉ = ${fewest}: 200 bodies of 16 KiB exceed the 512 KiB batch cap (the service takes 1 MiB)`,
      ),
      row('bodies stored = bytes printed', `${mb(big.stored.bytes)} in ${big.stored.n} bodies`, mb(100 * MB), big.stored.bytes === 100 * MB),
      row('svc peak RSS, 100 MB of output (JIT on: no V8 flags)', mb(big.peakRss), '≤ 120 MB', big.peakRss <= 120 * MB),
      row('svc peak RSS, an agent that prints nothing', mb(floor.peakRss), 'context', null, 'the floor: Node and the modules a run loads'),
      row('svc peak RSS, 100 MB ÷ 10 MB of output', `${x(flat)} (${mb(big.peakRss)} vs ${mb(small.peakRss)})`, '≤ 1.2× (flat)', flat <= 1.2),
      row('service 10× slower: agent wall ÷ into /dev/null', `${x(slowWall)} (${ms(slow.agentMs)})`, '≤ 1.1×', slowWall <= 1.1),
      row(
        'service 10× slower: svc peak RSS ÷ normal service',
        `${x(slowFlat)} (${mb(slow.peakRss)})`,
        '≤ 1.2× (flat)',
        slowFlat <= 1.2,
        `svc ran ${(slow.wallMs / 1000).toFixed(1)} s to deliver every event`,
      ),
      row(
        'agent printing 100 MB as fast as it can, svc run without --send-logs',
        `${rate(unpacedLocal).toFixed(0)} MB/s (${ms(unpacedLocal.agentMs)}; into /dev/null ${ms(unpacedAlone)})`,
        '≥ 200 MB/s',
        rate(unpacedLocal) >= 200,
        `${runs(unpacedLocal)}; svc peak RSS ${mb(unpacedLocal.peakRss)}, CPU ${ms(unpacedLocal.cpuMs)}`,
      ),
      row(
        'agent printing 100 MB as fast as it can, svc run --send-logs (local service)',
        `${rate(unpaced).toFixed(0)} MB/s (${ms(unpaced.agentMs)})`,
        '≥ 60 MB/s',
        rate(unpaced) >= 60,
        `${runs(unpaced)}; svc peak RSS ${mb(unpaced.peakRss)}, CPU ${ms(unpaced.cpuMs)}; every event delivered after ${(unpaced.wallMs / 1000).toFixed(1)} s; bodies stored ${mb(unpaced.stored.bytes)}`,
      ),
      row(
        'the same beside two busy loops, svc run without --send-logs',
        `${rate(loadedLocal).toFixed(0)} MB/s (${ms(loadedLocal.agentMs)})`,
        '≥ 200 MB/s',
        rate(loadedLocal) >= 200,
        `${runs(loadedLocal)}; svc CPU ${ms(loadedLocal.cpuMs)}`,
      ),
      row(
        'the floor beside the same busy loops: a bare Node reader (bench/agents/bare-reader.mjs: the same two scans, the log appended, no svc code)',
        `${rateOf(loadedLocal.floorMs).toFixed(0)} MB/s (${ms(loadedLocal.floorMs)}); svc's rate ÷ the floor's ${x(rate(loadedLocal) / rateOf(loadedLocal.floorMs))}`,
        'context',
        null,
        `median of ${loadedLocal.floorRates.join(', ')} MB/s, each run right after one of svc's; quiet machine: ${rateOf(unpacedLocal.floorMs).toFixed(0)} MB/s (median of ${unpacedLocal.floorRates.join(', ')}), svc's rate ÷ the floor's ${x(rate(unpacedLocal) / rateOf(unpacedLocal.floorMs))}`,
      ),
      row(
        'the machine beside the same busy loops: the agent into cat > file (no Node and no scan reading it)',
        `${rateOf(loadedLocal.catMs).toFixed(0)} MB/s (${ms(loadedLocal.catMs)}); svc's rate ÷ cat's ${x(rate(loadedLocal) / rateOf(loadedLocal.catMs))}`,
        'context',
        null,
        `median of ${loadedLocal.catRates.join(', ')} MB/s, each run right after the bare reader's; quiet machine: ${rateOf(unpacedLocal.catMs).toFixed(0)} MB/s (median of ${unpacedLocal.catRates.join(', ')})`,
      ),
      row(
        'the same beside two busy loops, svc run --send-logs (local service)',
        `${rate(loaded).toFixed(0)} MB/s (${ms(loaded.agentMs)})`,
        '≥ 60 MB/s',
        rate(loaded) >= 60,
        `${runs(loaded)}; svc CPU ${ms(loaded.cpuMs)}; bodies stored ${mb(loaded.stored.bytes)}`,
      ),
      row(
        'unpaced --send-logs: bodies stored = bytes printed, appends = journal batches',
        `${mb(unpaced.stored.bytes)}, ${unpaced.appends} = ${unpaced.batches.acks}; loaded ${mb(loaded.stored.bytes)}, ${loaded.appends} = ${loaded.batches.acks}`,
        '100.0 MB, equal',
        [unpaced, loaded].every((r) => r.stored.bytes === 100 * MB && r.appends === r.batches.acks),
      ),
    ];
  } finally {
    await service.close();
  }
}
