// The two ends of a run where the wire or the disk can leave it half done, against the real local
// service (through the fault proxy where the wire is under test):
// - the close (closeDispatchRun) failing ambiguously: the engine reads the run (getDispatchRun), closes again while it
//   is still running, and exits by the run's outcome with the journal closed;
// - the open (openDispatchRun) with no local record: a pending record comes first, an unwritable state folder
//   opens nothing, a record that fails after the open closes the run, and `svc runs recover` finds
//   a run whose open landed unrecorded by repeating the open with its idempotency key.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createApiClient, type ApiClient } from '../../../src/api/client.js';
import type { DispatchRun, DispatchRunOpen } from '../../../src/contract/types.js';
import { dispatchServiceOf } from '../../../src/dispatch/wire/service.js';
import { closeRun } from '../../../src/dispatch/wire/close.js';
import { runDispatch } from '../../../src/dispatch/lifecycle/dispatch.js';
import { recoverRuns } from '../../../src/dispatch/state/recover.js';
import { LocalStateError, listPendingOpens, pendingOpenPath, runPaths, writePendingOpen, type RunRecord } from '../../../src/dispatch/state/folder.js';
import { startFaultProxy, type Fault, type FaultProxy } from '../../support/fault-proxy.js';
import { startHarness, type Harness } from '../../support/engine.js';
import { inRepoWorktree, instantAgent } from './instant-agent.js';

let h: Harness;
let proxy: FaultProxy;
let clients: ApiClient[] = [];
beforeEach(async () => {
  h = await startHarness();
  proxy = await startFaultProxy({ target: h.svc.url });
});
afterEach(async () => {
  await Promise.all(clients.map((c) => c.close()));
  clients = [];
  await proxy.close();
  await h.close();
});

const CLOSE = /\/dispatch-runs\/[^/]+\/close$/;
const RUN = /\/dispatch-runs\/[^/]+$/;

function viaProxy(maxWaitMs = 2_000) {
  const client = createApiClient({ baseUrl: proxy.url, token: h.svc.token, maxWaitMs, timeoutMs: 5_000, retry: { baseDelayMs: 5, maxDelayMs: 20 } });
  clients.push(client);
  return dispatchServiceOf(client);
}

const rows = () =>
  h.svc.db.prepare('SELECT id, status, stop_reason AS stopReason FROM dispatch_runs ORDER BY started_at, id').all() as {
    id: string;
    status: string;
    stopReason: string | null;
  }[];

/** The journal's `closed` record, or null. */
function journalClosed(stateDir: string, runId: string): { stopReason: string | null; status: string | null } | null {
  const lines = readFileSync(runPaths(stateDir, runId).journal, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { t: string; stopReason: string | null; status: string | null });
  const closed = lines.find((l) => l.t === 'closed');
  return closed ? { stopReason: closed.stopReason, status: closed.status } : null;
}

/**
 * The pending record a `svc run` of `card` writes before its open (key `key`), as a process killed
 * then would leave it; `open` and `options` add to the open and to the run record. Returns the open.
 */
function pendingOf(key: string, card: string, open: Partial<DispatchRunOpen> = {}, options: RunRecord['options'] = {}): DispatchRunOpen {
  const cards = [{ workItemKey: card }];
  const sent: DispatchRunOpen = { projectKey: h.svc.projectKey, command: 'run', ...open, idempotencyKey: key, cards };
  writePendingOpen(h.stateDir, {
    idempotencyKey: key,
    open: sent,
    record: {
      baseUrl: h.svc.url,
      projectKey: h.svc.projectKey,
      command: 'run',
      originalCommand: 'run',
      scopeKey: null,
      openedAt: new Date().toISOString(),
      cards,
      options,
    },
  });
  return sent;
}

const recover = () => recoverRuns({ stateDir: h.stateDir, serviceFor: () => h.service, output: { info: () => {}, warn: () => {} } });

describe('an ambiguous failure of the close', () => {
  // [name, fault, closes the service receives]: a fault before the service saw the close costs a
  // second close; one after it applied the close is settled by the read alone.
  const CASES: [string, Fault, number][] = [
    ['a reset before the service saw it', { kind: 'reset-before' }, 2],
    ['a reset after the service applied it', { kind: 'reset-after' }, 1],
    ['an answer cut short', { kind: 'truncate' }, 1],
    ['an HTML 500 from a gateway', { kind: 'html-500' }, 2],
    ['a 502 from a gateway', { kind: 'status', status: 502 }, 2],
    ['a 504 from a gateway', { kind: 'status', status: 504 }, 2],
  ];

  it.each(CASES)('%s: the run is closed right on the service, the journal closed, exit by outcome', async (_name, fault, closes) => {
    const a = h.item('task', 'A');
    const b = h.item('task', 'B');
    proxy.setPlan([{ method: 'POST', path: CLOSE, times: 1, fault }]);
    // The legs are not under test here: in-process doubles (./instant-agent.ts) spawn nothing.
    const s = await runDispatch(
      h.opts({ keys: [a, b], allowEmpty: true }),
      h.deps({ service: viaProxy(), runAgentProcess: instantAgent, prepareWorktree: inRepoWorktree }),
    );
    expect(s, h.seen.join('\n')).toMatchObject({ stopReason: 'completed', status: 'succeeded', exitCode: 0 });
    expect(rows()).toEqual([{ id: s.runId, status: 'succeeded', stopReason: 'completed' }]);
    expect(journalClosed(h.stateDir, s.runId!)).toEqual({ stopReason: 'completed', status: 'succeeded' });
    expect(proxy.seen.filter((r) => r.fault).map((r) => r.fault)).toEqual([fault.kind]);
    // Forwarded closes only (a fault answered by the proxy itself never reached the service).
    const reached = proxy.requests('POST', CLOSE).filter((r) => r.fault !== 'reset-before' && r.fault !== 'html-500' && r.fault !== 'status').length;
    expect(reached).toBe(1);
    expect(proxy.requests('POST', CLOSE)).toHaveLength(closes);
    expect(h.seen.some((l) => l.includes('svc runs recover'))).toBe(false);
    // Nothing is left for recover.
    expect(await recover()).toEqual([]);
  });

  it('a failed run closes failed and exits 1 after a lost answer, not 5', async () => {
    const a = h.item('task', 'A');
    proxy.setPlan([{ method: 'POST', path: CLOSE, times: 1, fault: { kind: 'reset-after' } }]);
    const s = await runDispatch(h.opts({ keys: [a], agent: { agentCmd: 'sh -c "exit 3"' } }), h.deps({ service: viaProxy() }));
    expect(s).toMatchObject({ stopReason: 'halted', status: 'failed', exitCode: 1 });
    expect(rows()[0]).toMatchObject({ status: 'failed', stopReason: 'halted' });
    expect(journalClosed(h.stateDir, s.runId!)).toEqual({ stopReason: 'halted', status: 'failed' });
  });

  it('while the service stays unreachable the run is left for recover (exit 5), which closes it right', async () => {
    const a = h.item('task', 'A');
    proxy.setPlan([
      { method: 'POST', path: CLOSE, fault: { kind: 'status', status: 502 } },
      { method: 'GET', path: RUN, fault: { kind: 'status', status: 503 } },
    ]);
    const s = await runDispatch(h.opts({ keys: [a] }), h.deps({ service: viaProxy(200) }));
    expect(s).toMatchObject({ exitCode: 5 });
    expect(rows()[0]).toMatchObject({ status: 'running' });
    expect(journalClosed(h.stateDir, s.runId!)).toBeNull();
    expect(h.seen.some((l) => l.includes('svc runs recover'))).toBe(true);
    const [r] = await recover();
    expect(r).toMatchObject({ runId: s.runId, action: 'closed', stopReason: 'completed', status: 'succeeded' });
    expect(journalClosed(h.stateDir, s.runId!)).toEqual({ stopReason: 'completed', status: 'succeeded' });
  });
});

describe('closeRun', () => {
  const close = { stopReason: 'completed', status: 'succeeded' } as const;
  const ambiguous = Object.assign(new Error('connection lost'), { status: 0, ambiguous: true });
  const conflict = Object.assign(new Error('run closed'), { status: 409, code: 'RUN_CLOSED', ambiguous: false });
  const run = (over: Partial<DispatchRun>) => ({ id: 'run_1', status: 'running', stopReason: null, seq: 0, cards: [], ...over }) as unknown as DispatchRun;

  /** A service answering from scripts: each call takes the next answer (an Error is thrown). */
  function scripted(closes: (DispatchRun | Error)[], reads: (DispatchRun | Error)[]) {
    const calls: string[] = [];
    const next = async (kind: string, list: (DispatchRun | Error)[]) => {
      calls.push(kind);
      const a = list.shift();
      if (!a) throw new Error(`unexpected ${kind}`);
      if (a instanceof Error) throw a;
      return a;
    };
    return { calls, service: { closeDispatchRun: () => next('close', closes), getDispatchRun: () => next('read', reads) } };
  }

  it('a 409 on the close repeated after an ambiguous failure: the read says it was ours', async () => {
    const s = scripted([ambiguous, conflict], [run({}), run({ status: 'succeeded', stopReason: 'completed' })]);
    const r = await closeRun(s.service, 'run_1', close, { retryBaseMs: 1 });
    expect(r).toMatchObject({ kind: 'closed', run: { status: 'succeeded' } });
    expect(s.calls).toEqual(['close', 'read', 'close', 'read']);
  });

  it('closed otherwise meanwhile (the reaper): closed-elsewhere', async () => {
    const s = scripted([ambiguous], [run({ status: 'cancelled', stopReason: 'abandoned' })]);
    expect(await closeRun(s.service, 'run_1', close)).toMatchObject({ kind: 'closed-elsewhere', run: { stopReason: 'abandoned' } });
  });

  it("a 409 on the first close is someone else's close", async () => {
    const s = scripted([conflict], [run({ status: 'succeeded', stopReason: 'completed' })]);
    expect(await closeRun(s.service, 'run_1', close)).toMatchObject({ kind: 'closed-elsewhere' });
  });

  it('gives up after its bounded retries while the run stays running; a refusal or an unambiguous fault at once', async () => {
    const s = scripted([ambiguous, ambiguous, ambiguous], [run({}), run({}), run({})]);
    await expect(closeRun(s.service, 'run_1', close, { maxRetries: 2, retryBaseMs: 1 })).rejects.toBe(ambiguous);
    expect(s.calls).toEqual(['close', 'read', 'close', 'read', 'close', 'read']);
    const unavailable = Object.assign(new Error('503'), { status: 503, ambiguous: false });
    const t = scripted([unavailable], []);
    await expect(closeRun(t.service, 'run_1', close)).rejects.toBe(unavailable);
    expect(t.calls).toEqual(['close']);
  });
});

describe('the local record comes before the open', () => {
  it('a state folder that cannot be written: a one-line error, exit 1, no run opened', async () => {
    const a = h.item('task', 'A');
    const root = mkdtempSync(join(tmpdir(), 'svc-unwritable-'));
    writeFileSync(join(root, 'not-a-folder'), '');
    const stateDir = join(root, 'not-a-folder', 'state');
    const error = await runDispatch(h.opts({ keys: [a] }), h.deps({ stateDir })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LocalStateError);
    expect((error as LocalStateError).exitCode).toBe(1);
    expect((error as Error).message).not.toContain('\n');
    expect((error as Error).message).toMatch(/ENOTDIR.*no run was opened/);
    expect(rows()).toEqual([]);
  });

  it("a user's idempotency key never names a path", () => {
    for (const key of ['../../etc/passwd', 'a/b', '.', '']) {
      expect(pendingOpenPath(h.stateDir, key).startsWith(join(h.stateDir, 'opening') + '/')).toBe(true);
    }
  });

  it('the pending record exists while the open is in flight, with the key, base URL, project, command and cards', async () => {
    const a = h.item('task', 'A');
    let seenDuringOpen: string | null = null;
    const service = { ...h.service };
    service.openDispatchRun = async (body) => {
      const [p] = listPendingOpens(h.stateDir);
      seenDuringOpen = p ? readFileSync(p.path, 'utf8') : null;
      return h.service.openDispatchRun(body);
    };
    const s = await runDispatch(h.opts({ keys: [a], idempotencyKey: 'ci-job-7' }), h.deps({ service }));
    expect(s.exitCode).toBe(0);
    expect(seenDuringOpen).not.toBeNull();
    const p = JSON.parse(seenDuringOpen!) as {
      idempotencyKey: string;
      open: { cards: unknown[] };
      record: { baseUrl: string; projectKey: string; command: string };
    };
    expect(p).toMatchObject({
      idempotencyKey: 'ci-job-7',
      open: { idempotencyKey: 'ci-job-7', cards: [{ workItemKey: a }] },
      record: { baseUrl: h.svc.url, projectKey: h.svc.projectKey, command: 'run' },
    });
    expect(seenDuringOpen).not.toContain(h.svc.token);
    expect(listPendingOpens(h.stateDir)).toEqual([]);
  });

  it('the record fails after the open: the run is closed interrupted/cancelled before exiting, nothing left to recover', async () => {
    const a = h.item('task', 'A');
    mkdirSync(h.stateDir, { recursive: true });
    // `runs` as a regular file: the pending record (under `opening/`) is written, run.json is not.
    writeFileSync(join(h.stateDir, 'runs'), '');
    const error = await runDispatch(h.opts({ keys: [a] }), h.deps()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LocalStateError);
    expect((error as Error).message).toMatch(/cannot record run run_\S+ .*closed interrupted/);
    expect(rows()).toMatchObject([{ status: 'cancelled', stopReason: 'interrupted' }]);
    expect(listPendingOpens(h.stateDir)).toEqual([]);
    rmSync(join(h.stateDir, 'runs'));
    expect(await recover()).toEqual([]);
  });

  it('killed between the open and run.json (the record fails and so does the close): recover closes it', async () => {
    const a = h.item('task', 'A');
    mkdirSync(h.stateDir, { recursive: true });
    writeFileSync(join(h.stateDir, 'runs'), '');
    proxy.setPlan([{ method: 'POST', path: CLOSE, fault: { kind: 'status', status: 503 } }]);
    const error = await runDispatch(h.opts({ keys: [a] }), h.deps({ service: viaProxy(100) })).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/could not be closed either.*svc runs recover/);
    const [row] = rows();
    expect(row).toMatchObject({ status: 'running' });
    expect(listPendingOpens(h.stateDir)).toHaveLength(1);

    rmSync(join(h.stateDir, 'runs'));
    const results = await recover();
    expect(results).toEqual([expect.objectContaining({ runId: row!.id, action: 'closed', stopReason: 'interrupted', status: 'cancelled' })]);
    expect(rows()).toEqual([{ id: row!.id, status: 'cancelled', stopReason: 'interrupted' }]);
    expect(listPendingOpens(h.stateDir)).toEqual([]);
    expect(journalClosed(h.stateDir, row!.id)).toEqual({ stopReason: 'interrupted', status: 'cancelled' });
    expect(await recover()).toEqual([]);
  });

  it('a kill right after the open answered (simulated: the open made, only the pending record on disk): recover finds the run by its key', async () => {
    const a = h.item('task', 'A');
    const open = pendingOf('killed-1', a, { origin: 'local' }, { idempotencyKey: 'killed-1' });
    const { run } = await h.service.openDispatchRun(open);
    const [r] = await recover();
    expect(r).toMatchObject({ runId: run.id, action: 'closed', stopReason: 'interrupted', status: 'cancelled' });
    expect(rows()).toHaveLength(1);
    expect(existsSync(runPaths(h.stateDir, run.id).runJson)).toBe(true);
    expect(readdirSync(join(h.stateDir, 'opening'))).toEqual([]);
  });

  it('an open refused (4xx) leaves no pending record; one failing past max-wait keeps it for recover', async () => {
    const a = h.item('task', 'A');
    const refused = await runDispatch(h.opts({ keys: [a], projectKey: 'NOPE' }), h.deps()).catch((e: unknown) => e);
    expect((refused as { status?: number }).status).toBe(404);
    expect(listPendingOpens(h.stateDir)).toEqual([]);

    proxy.setPlan([{ method: 'POST', path: /\/dispatch-runs$/, fault: { kind: 'reset-after' } }]);
    const lost = await runDispatch(h.opts({ keys: [a] }), h.deps({ service: viaProxy(150) })).catch((e: unknown) => e);
    expect((lost as { status?: number }).status).toBe(0);
    expect(h.seen.some((l) => l.includes('may have landed'))).toBe(true);
    // Every attempt reached the service: the first made the run, the repeats found it.
    const [row] = rows();
    expect(row).toMatchObject({ status: 'running' });
    expect(listPendingOpens(h.stateDir)).toHaveLength(1);
    const [r] = await recover();
    expect(r).toMatchObject({ runId: row!.id, action: 'closed', stopReason: 'interrupted', status: 'cancelled' });
    expect(rows()).toHaveLength(1);
    expect(listPendingOpens(h.stateDir)).toEqual([]);
  });

  it("an open that never landed: recover's repeat opens it now and closes it at once; a 409 opens nothing", async () => {
    const a = h.item('task', 'A');
    const b = h.item('task', 'B');
    pendingOf('lost-1', a);
    const [r] = await recover();
    expect(r).toMatchObject({ action: 'closed', stopReason: 'interrupted', status: 'cancelled' });
    expect(rows()).toMatchObject([{ status: 'cancelled' }]);

    // B is taken by another running run: the lost open cannot have landed (the key would answer first).
    const other = await h.service.openDispatchRun({ projectKey: h.svc.projectKey, command: 'run', cards: [{ workItemKey: b }] });
    pendingOf('lost-2', b);
    const [q] = await recover();
    expect(q).toMatchObject({ runId: 'opening lost-2', action: 'not-opened' });
    expect(rows().map((x) => x.id)).toEqual([r!.runId, other.run.id]);
    expect(listPendingOpens(h.stateDir)).toEqual([]);
  });
});
