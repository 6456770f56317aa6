// submitPlanSession (submit), 21 (plan) and 22 (plan status) against the real local service, with the
// built-in planner and with real agent commands (small node scripts) as the planning dependency;
// plus the reconciler and approval in the product (admin functions).
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, test, vi } from 'vitest';
import { approvePlan, configurePlanner, planCredits, reconcilePlans, runnerFor, setPlanCredits } from '../../../src/server/planning/index.js';
import { tokenWith } from '../support/http.js';
import { useProjectService } from '../support/project-service.js';

const { svc, call, project } = useProjectService('Q', 'Plans');
let dir: string;

const node = JSON.stringify(process.execPath);
const readStdin = `let s = ''; process.stdin.on('data', (d) => (s += d)); process.stdin.on('end', () => main(JSON.parse(s)));`;
/** Answers one `add` per turn, titled by the turn, each blocked by the one before. */
const ECHO = `${readStdin}
function main(input) {
  process.stdout.write(JSON.stringify({ title: 'Echo of ' + input.project.key, summary: input.targetKeys.join(','),
    proposals: input.turns.map((t) => ({ ref: 'T' + t.seq, op: 'add', proposedFields: { kind: 'task', title: t.body },
      blockedByRefs: t.seq > 1 ? ['T' + (t.seq - 1)] : [] })) }));
}`;
/** Holds its answer until a gate file exists (or 10 s pass), so a test can see a job in flight. */
const GATED = `${readStdin}
const gate = process.argv[2];
function main() {
  const fs = require('node:fs');
  const t0 = Date.now();
  const tick = setInterval(() => {
    if (fs.existsSync(gate) || Date.now() - t0 > 10000) { clearInterval(tick); process.stdout.write('[]'); }
  }, 20);
}`;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'svc-planner-'));
  writeFileSync(join(dir, 'echo.cjs'), ECHO);
  writeFileSync(join(dir, 'gated.cjs'), GATED);
  writeFileSync(join(dir, 'prose.cjs'), `${readStdin}\nfunction main() { process.stdout.write('Here is my plan: do things.'); }`);
  writeFileSync(join(dir, 'badop.cjs'), `${readStdin}\nfunction main() { process.stdout.write(JSON.stringify([{ op: 'rename' }])); }`);
  writeFileSync(join(dir, 'crash.cjs'), `${readStdin}\nfunction main() { process.stderr.write('boom'); process.exit(3); }`);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
beforeEach(() => {
  configurePlanner(svc.db, { kind: 'builtin' });
  setPlanCredits(svc.db, svc.workspaceId, null);
});

async function turns(key: string, bodies: string[], address: object = {}): Promise<void> {
  for (const body of bodies) {
    const res = await call('POST', `/projects/${key}/plan-session/turns`, { body, ...address });
    expect(res.status).toBe(200);
  }
}

async function submit(key: string, address: object = {}) {
  const res = await call('POST', `/projects/${key}/plan-session/submissions`, address);
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return res.body as { jobId: string; planId: string; statusUrl: string };
}

/** Waits for the background jobs, then reads the plan's status. */
async function settled(planId: string) {
  await runnerFor(svc.db).idle();
  const res = await call('GET', `/plans/${planId}/status`);
  expect(res.status).toBe(200);
  return res.body;
}

describe('POST /projects/{projectKey}/plan-session/submissions (submitPlanSession)', () => {
  test('202 at once; the built-in planner fills the plan: generating → planned', async () => {
    const key = project();
    await turns(key, ['Collect payment details', 'Confirm the order']);
    const sub = await submit(key);
    expect(sub.statusUrl).toBe(`${svc.url}/api/v1/plans/${sub.planId}/status`);
    const status = await settled(sub.planId);
    expect(status).toMatchObject({ planId: sub.planId, status: 'planned', origin: 'user', jobId: sub.jobId, proposalCount: 2, decidedAt: null });
    expect(status.job).toMatchObject({ id: sub.jobId, status: 'succeeded', reachable: true });
    const plan = await call('GET', `/plans/${sub.planId}`);
    expect(plan.status).toBe(200);
    expect(plan.body).toMatchObject({ id: sub.planId, status: 'planned', sourceJobId: sub.jobId, proposalCount: 2, title: `Plan for ${key}` });
    expect(
      plan.body.proposals.map((p: { op: string; proposedFields: { title: string }; workItemKey: null }) => [p.op, p.proposedFields.title, p.workItemKey]),
    ).toEqual([
      ['add', 'Collect payment details', null],
      ['add', 'Confirm the order', null],
    ]);
    const thread = await call('POST', `/projects/${key}/plan-session`, {});
    expect([thread.body.turnCount, thread.body.lastJobId]).toEqual([2, sub.jobId]);
    expect(thread.body.lastSubmittedAt).not.toBeNull();
  });

  test('an agent command gets every turn in order on stdin and its JSON answer becomes the plan', async () => {
    const key = project();
    const anchor = svc.admin.createWorkItem({ projectKey: key, kind: 'epic', title: 'Checkout' }).key;
    configurePlanner(svc.db, { kind: 'command', command: `${node} ${JSON.stringify(join(dir, 'echo.cjs'))}` });
    await turns(key, ['first', 'second', 'third'], { targetKeys: [anchor] });
    const sub = await submit(key, { targetKeys: [anchor] });
    const status = await settled(sub.planId);
    expect([status.status, status.job.error]).toEqual(['planned', null]);
    const plan = (await call('GET', `/plans/${sub.planId}`)).body;
    expect([plan.title, plan.summary]).toEqual([`Echo of ${key}`, anchor]);
    expect(plan.proposals.map((p: { ref: string; blockedByRefs: string[] }) => [p.ref, p.blockedByRefs])).toEqual([
      ['T1', []],
      ['T2', ['T1']],
      ['T3', ['T2']],
    ]);
  });

  test.each([
    ['prose instead of JSON', 'prose.cjs', true],
    ['an unknown proposal op', 'badop.cjs', true],
    ['a non-zero exit', 'crash.cjs', true],
    ['a command that does not exist', 'no-such-planner-here', false],
  ])('%s fails the job (reachable: $2); the reconciler then declines the empty plan', async (_why, script, reachable) => {
    const key = project();
    const command = script.endsWith('.cjs') ? `${node} ${JSON.stringify(join(dir, script))}` : script;
    configurePlanner(svc.db, { kind: 'command', command });
    await turns(key, ['anything']);
    const sub = await submit(key);
    const status = await settled(sub.planId);
    // Until the reconciler runs, only the job shows the failure.
    expect([status.status, status.proposalCount, status.job.status, status.job.reachable]).toEqual(['generating', 0, 'failed', reachable]);
    expect(reconcilePlans(svc.db, new Date())).toBeGreaterThanOrEqual(1);
    const after = await call('GET', `/plans/${sub.planId}/status`);
    expect(after.body.status).toBe('declined');
    expect(after.body.decidedAt).not.toBeNull();
  });

  test('a turn while the submission is in flight is 409; afterwards it is accepted', async () => {
    const key = project();
    const gate = join(dir, `gate-${key}`);
    configurePlanner(svc.db, { kind: 'command', command: `${node} ${JSON.stringify(join(dir, 'gated.cjs'))} ${JSON.stringify(gate)}` });
    await turns(key, ['slow one']);
    const sub = await submit(key);
    // The gated planner holds the job running until the gate opens.
    const jobOf = async () => (await call('GET', `/plans/${sub.planId}/status`)).body.job?.status;
    await vi.waitUntil(async () => (await jobOf()) === 'running', { timeout: 5_000, interval: 10 });
    const during = await call('POST', `/projects/${key}/plan-session/turns`, { body: 'too early' });
    expect([during.status, during.body.code]).toEqual([409, 'CONFLICT']);
    const running = await call('GET', `/plans/${sub.planId}/status`);
    expect([running.body.status, running.body.job.status]).toEqual(['generating', 'running']);
    writeFileSync(gate, '');
    expect((await settled(sub.planId)).status).toBe('planned');
    const after = await call('POST', `/projects/${key}/plan-session/turns`, { body: 'now fine' });
    expect(after.status).toBe(200);
    expect(existsSync(gate)).toBe(true);
  });

  test('a newer submission marks the thread’s planned plan stale', async () => {
    const key = project();
    await turns(key, ['one']);
    const first = await submit(key);
    await settled(first.planId);
    const second = await submit(key);
    await settled(second.planId);
    expect((await call('GET', `/plans/${first.planId}`)).body.status).toBe('stale');
    expect((await call('GET', `/plans/${second.planId}`)).body.status).toBe('planned');
  });

  test('each submission spends one credit; none left is 402 ENTITLEMENT_EXHAUSTED', async () => {
    const key = project();
    await turns(key, ['spend']);
    setPlanCredits(svc.db, svc.workspaceId, 1);
    await submit(key);
    expect(planCredits(svc.db, svc.workspaceId)).toBe(0);
    const res = await call('POST', `/projects/${key}/plan-session/submissions`, {});
    expect([res.status, res.body.code]).toEqual([402, 'ENTITLEMENT_EXHAUSTED']);
  });

  test.each([
    ['no planner configured', { kind: 'none' } as const],
    ['a blank agent command', { kind: 'command', command: '  ' } as const],
  ])('%s is 503 UNAVAILABLE and costs nothing', async (_why, setting) => {
    const key = project();
    await turns(key, ['x']);
    configurePlanner(svc.db, setting);
    setPlanCredits(svc.db, svc.workspaceId, 5);
    const res = await call('POST', `/projects/${key}/plan-session/submissions`, {});
    expect([res.status, res.body.code, planCredits(svc.db, svc.workspaceId)]).toEqual([503, 'UNAVAILABLE', 5]);
  });

  test.each([
    ['a thread that does not exist yet', async (_key: string) => ({})],
    ['a thread without turns', async (key: string) => (await call('POST', `/projects/${key}/plan-session`, {}), {})],
    ['an unknown property', async () => ({ force: true })],
  ])('%s is 422 INVALID_REQUEST', async (_why, make) => {
    const key = project();
    const res = await call('POST', `/projects/${key}/plan-session/submissions`, await make(key));
    expect([res.status, res.body.code]).toEqual([422, 'INVALID_REQUEST']);
  });

  test('401, 403 without ai:plan, 404 for an unknown project or sessionId', async () => {
    const key = project();
    await turns(key, ['x']);
    const path = `/projects/${key}/plan-session/submissions`;
    expect((await call('POST', path, {}, null)).status).toBe(401);
    const forbidden = await call('POST', path, {}, tokenWith(svc, ['project:browse', 'work_item:edit', 'sprint:manage']));
    expect([forbidden.status, forbidden.body.code]).toEqual([403, 'FORBIDDEN']);
    expect((await call('POST', '/projects/NOPE/plan-session/submissions', {})).status).toBe(404);
    const unknown = await call('POST', path, { sessionId: 'pth_nope' });
    expect([unknown.status, unknown.body.code]).toEqual([404, 'NOT_FOUND']);
  });
});

describe('GET /plans/{planId} and /plans/{planId}/status (ops 21, 22)', () => {
  test.each([['/plans/%s'], ['/plans/%s/status']])('%s: 404 unknown, outside the token, or another workspace; 401; 403', async (shape) => {
    const key = project();
    await turns(key, ['x']);
    const { planId } = await submit(key);
    await settled(planId);
    const path = (id: string) => shape.replace('%s', id);
    expect((await call('GET', path(planId))).status).toBe(200);
    expect((await call('GET', path('plan_nope'))).status).toBe(404);
    const narrowed = await call('GET', path(planId), undefined, tokenWith(svc, ['project:browse'], project()));
    expect([narrowed.status, narrowed.body.code]).toEqual([404, 'NOT_FOUND']);
    const ws = svc.admin.createWorkspace({ name: `Else ${key}`, slug: `else-${key.toLowerCase()}` });
    svc.admin.addMember(ws.id, svc.userId);
    const foreign = svc.admin.createToken({ workspaceId: ws.id, userId: svc.userId }).token;
    expect((await call('GET', path(planId), undefined, foreign)).status).toBe(404);
    expect((await call('GET', path(planId), undefined, null)).status).toBe(401);
    const noBrowse = await call('GET', path(planId), undefined, tokenWith(svc, ['ai:plan', 'work_item:edit']));
    expect([noBrowse.status, noBrowse.body.code]).toEqual([403, 'FORBIDDEN']);
  });
});

describe('approval in the product (admin approvePlan)', () => {
  test('turns proposals into work items under the anchor, with their dependencies', async () => {
    const key = project();
    const epic = svc.admin.createWorkItem({ projectKey: key, kind: 'epic', title: 'Checkout' }).key;
    await turns(key, ['- Build the cart\n- Take payment'], { targetKeys: [epic] });
    const { planId } = await submit(key, { targetKeys: [epic] });
    await settled(planId);
    const approval = approvePlan(svc.db, planId);
    expect(approval.createdKeys).toHaveLength(2);
    const [cart, payment] = approval.createdKeys as [string, string];
    const detail = (await call('GET', `/work-items/${payment}`)).body;
    expect(detail).toMatchObject({ title: 'Take payment', kind: 'task', parentKey: epic, planningSource: 'native' });
    expect(detail.dependencies.blockedBy.map((d: { key: string }) => d.key)).toEqual([cart]);
    const plan = (await call('GET', `/plans/${planId}`)).body;
    expect([plan.status, plan.decidedAt !== null]).toEqual(['approved', true]);
    expect(plan.proposals.map((p: { workItemKey: string }) => p.workItemKey)).toEqual([cart, payment]);
    expect(plan.proposalCount).toBe(2);
    expect(() => approvePlan(svc.db, planId)).toThrow(/approved/);
  });

  test('a plan still generating, or declined, cannot be approved', async () => {
    const key = project();
    configurePlanner(svc.db, { kind: 'command', command: 'no-such-planner-here' });
    await turns(key, ['x']);
    const { planId } = await submit(key);
    expect(() => approvePlan(svc.db, planId)).toThrow(/generating/);
    await settled(planId);
    reconcilePlans(svc.db, new Date());
    expect(() => approvePlan(svc.db, planId)).toThrow(/declined/);
  });
});
