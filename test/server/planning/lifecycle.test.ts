// The planning job's life beyond one happy request: a planner that never answers is killed with
// everything it started, and a job left in flight by a stopped service is failed (and its empty
// plan declined) when the service starts again on the same database.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { startServer } from '../../../src/server/index.js';
import { configurePlanner, runnerFor } from '../../../src/server/planning/index.js';
import { startTestService } from '../../support/service.js';
import { caller } from '../support/http.js';

let dir: string;
// A shell planner, not a node one: it starts in milliseconds, so even on a loaded machine it has
// written its grandchild's pid before the planner timeout below (a node start-up once took longer).
const hang = () => `sh ${JSON.stringify(join(dir, 'hang.sh'))}`;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'svc-plan-life-'));
  // Starts a grandchild that would answer after 20 s, records its pid, and waits for it.
  writeFileSync(join(dir, 'hang.sh'), 'sh -c \'sleep 20; echo "[]"\' &\necho $! > "$1"\nwait\n');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Running, as opposed to gone or a zombie (a container's init may never reap orphans). */
const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return true; // no /proc: signal 0 reached a live process
  }
};

test('a planner that does not answer in time fails the job (reachable) and its process group is killed', async () => {
  const previous = process.env.SVC_PLANNER_TIMEOUT_MS;
  process.env.SVC_PLANNER_TIMEOUT_MS = '400';
  const svc = await startTestService();
  try {
    const call = caller(svc);
    const pidFile = join(dir, 'grandchild.pid');
    configurePlanner(svc.db, { kind: 'command', command: `${hang()} ${JSON.stringify(pidFile)}` });
    await call('POST', '/projects/PROJ/plan-session/turns', { body: 'never answered' });
    const sub = await call('POST', '/projects/PROJ/plan-session/submissions', {});
    expect(sub.status).toBe(202);
    await runnerFor(svc.db).idle();
    const status = await call('GET', `/plans/${sub.body.planId}/status`);
    expect([status.body.status, status.body.job.status, status.body.job.reachable]).toEqual(['generating', 'failed', true]);
    expect(status.body.job.error).toMatch(/did not answer within 400 ms/);
    const grandchild = Number(readFileSync(pidFile, 'utf8'));
    // The planner's whole group is killed at the timeout; the kernel reaps it shortly after.
    await vi.waitUntil(() => !alive(grandchild), { timeout: 5_000, interval: 10 });
  } finally {
    if (previous === undefined) delete process.env.SVC_PLANNER_TIMEOUT_MS;
    else process.env.SVC_PLANNER_TIMEOUT_MS = previous;
    await svc.close();
  }
});

test('a job in flight when the service stops is failed at the next start, and its empty plan declined', async () => {
  const dbFile = join(dir, 'restart.db');
  const first = await startTestService({ dbFile });
  const call = caller(first);
  configurePlanner(first.db, { kind: 'command', command: `${hang()} ${JSON.stringify(join(dir, 'x.pid'))}` });
  await call('POST', '/projects/PROJ/plan-session/turns', { body: 'interrupted' });
  const sub = await call('POST', '/projects/PROJ/plan-session/submissions', {});
  const jobStatus = () => (first.db.prepare('SELECT status FROM plan_jobs WHERE id = ?').get(sub.body.jobId) as { status: string }).status;
  await vi.waitUntil(() => jobStatus() !== 'queued', { timeout: 5_000, interval: 10 });
  expect(jobStatus()).toBe('running');
  await first.close();

  const second = await startServer({ dbFile });
  try {
    const res = await fetch(`${second.url}/api/v1/plans/${sub.body.planId}/status`, { headers: { authorization: `Bearer ${first.token}` } });
    const body = (await res.json()) as { status: string; job: { status: string; error: string } };
    expect([res.status, body.status, body.job.status]).toEqual([200, 'declined', 'failed']);
    expect(body.job.error).toMatch(/stopped before the job finished/);
  } finally {
    await second.close();
  }
});
