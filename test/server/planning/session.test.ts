// openPlanSession (open a thread) and 19 (add a turn) against the real local service: thread
// addressing by anchor set or sessionId, turns persisting without a job, and every refusal.
import { describe, expect, test } from 'vitest';
import { planCredits, setPlanCredits } from '../../../src/server/planning/index.js';
import { tokenWith } from '../support/http.js';
import { useProjectService } from '../support/project-service.js';

const { svc, call, project } = useProjectService('S', 'Sessions');

const item = (key: string, title = 'anchor') => svc.admin.createWorkItem({ projectKey: key, kind: 'story', title }).key;
const jobCount = () => (svc.db.prepare('SELECT COUNT(*) AS n FROM plan_jobs').get() as { n: number }).n;

describe('POST /projects/{projectKey}/plan-session (openPlanSession)', () => {
  test('without targetKeys opens the project-wide thread; opening again resumes it', async () => {
    const key = project();
    const first = await call('POST', `/projects/${key}/plan-session`, {});
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ targetKeys: [], turnCount: 0, lastJobId: null, lastSubmittedAt: null, turns: [] });
    const again = await call('POST', `/projects/${key}/plan-session`);
    expect([again.status, again.body.id]).toEqual([200, first.body.id]);
  });

  test('one thread per anchor set: order and duplicates do not matter', async () => {
    const key = project();
    const [a, b, c] = [item(key), item(key), item(key)];
    const ab = await call('POST', `/projects/${key}/plan-session`, { targetKeys: [b, a, b] });
    expect(ab.body.targetKeys).toEqual([a, b]);
    const ba = await call('POST', `/projects/${key}/plan-session`, { targetKeys: [a, b] });
    expect(ba.body.id).toBe(ab.body.id);
    const other = await call('POST', `/projects/${key}/plan-session`, { targetKeys: [a, c] });
    const wide = await call('POST', `/projects/${key}/plan-session`, {});
    expect(new Set([ab.body.id, other.body.id, wide.body.id]).size).toBe(3);
  });

  test('keys sort by number, not as text', async () => {
    const key = project();
    const keys = Array.from({ length: 10 }, () => item(key));
    const res = await call('POST', `/projects/${key}/plan-session`, { targetKeys: [keys[9], keys[1]] });
    expect(res.body.targetKeys).toEqual([keys[1], keys[9]]);
  });

  test('sessionId addresses a thread, with or without its own targetKeys', async () => {
    const key = project();
    const a = item(key);
    const opened = await call('POST', `/projects/${key}/plan-session`, { targetKeys: [a] });
    const byId = await call('POST', `/projects/${key}/plan-session`, { sessionId: opened.body.id });
    const both = await call('POST', `/projects/${key}/plan-session`, { sessionId: opened.body.id, targetKeys: [a, a] });
    expect([byId.status, byId.body.id, both.status, both.body.id]).toEqual([200, opened.body.id, 200, opened.body.id]);
  });

  test('creates nothing billable', async () => {
    const key = project();
    setPlanCredits(svc.db, svc.workspaceId, 3);
    await call('POST', `/projects/${key}/plan-session`, {});
    expect(planCredits(svc.db, svc.workspaceId)).toBe(3);
    setPlanCredits(svc.db, svc.workspaceId, null);
  });
});

describe('POST /projects/{projectKey}/plan-session/turns (addPlanTurn)', () => {
  test('persists one turn per call, in order, without a job or a credit', async () => {
    const key = project();
    setPlanCredits(svc.db, svc.workspaceId, 2);
    const jobs = jobCount();
    const one = await call('POST', `/projects/${key}/plan-session/turns`, { body: 'Split checkout into steps' });
    const two = await call('POST', `/projects/${key}/plan-session/turns`, { body: 'Add a review page' });
    expect([one.status, two.status]).toEqual([200, 200]);
    expect(two.body.id).toBe(one.body.id);
    expect(two.body.turnCount).toBe(2);
    expect(two.body.turns.map((t: { seq: number; body: string; authorId: string }) => [t.seq, t.body, t.authorId])).toEqual([
      [1, 'Split checkout into steps', svc.userId],
      [2, 'Add a review page', svc.userId],
    ]);
    expect([two.body.lastJobId, jobCount(), planCredits(svc.db, svc.workspaceId)]).toEqual([null, jobs, 2]);
    const reopened = await call('POST', `/projects/${key}/plan-session`, {});
    expect(reopened.body.turnCount).toBe(2);
    setPlanCredits(svc.db, svc.workspaceId, null);
  });

  test('a turn goes to the thread its targetKeys or sessionId name', async () => {
    const key = project();
    const a = item(key);
    const anchored = await call('POST', `/projects/${key}/plan-session/turns`, { body: 'about A', targetKeys: [a] });
    await call('POST', `/projects/${key}/plan-session/turns`, { body: 'again', sessionId: anchored.body.id });
    const wide = await call('POST', `/projects/${key}/plan-session`, {});
    const thread = await call('POST', `/projects/${key}/plan-session`, { targetKeys: [a] });
    expect([wide.body.turnCount, thread.body.turnCount]).toEqual([0, 2]);
  });
});

describe('refusals of ops 18 and 19', () => {
  const ops = [
    ['plan-session', {}],
    ['plan-session/turns', { body: 'hello' }],
  ] as const;

  test.each(ops)('%s: an unknown sessionId, or one of another project, is 404', async (path, base) => {
    const key = project();
    const theirs = await call('POST', `/projects/${project()}/plan-session`, {});
    for (const sessionId of ['pth_nope', theirs.body.id]) {
      const res = await call('POST', `/projects/${key}/${path}`, { ...base, sessionId });
      expect([res.status, res.body.code]).toEqual([404, 'NOT_FOUND']);
    }
  });

  test.each(ops)('%s: bad addressing is 422 INVALID_REQUEST', async (path, base) => {
    const key = project();
    const a = item(key);
    const b = item(key);
    const thread = await call('POST', `/projects/${key}/plan-session`, { targetKeys: [a] });
    const elsewhere = item(project());
    for (const extra of [
      { targetKeys: [`${key}-999`] },
      { targetKeys: [elsewhere] },
      { targetKeys: ['lowercase-1'] },
      { sessionId: thread.body.id, targetKeys: [b] },
      { anchors: [a] },
    ]) {
      const res = await call('POST', `/projects/${key}/${path}`, { ...base, ...extra });
      expect([JSON.stringify(extra), res.status, res.body.code]).toEqual([JSON.stringify(extra), 422, 'INVALID_REQUEST']);
    }
  });

  test.each([[{}], [{ body: '' }], [{ body: '   ' }], [{ body: 'x'.repeat(20_001) }], [{ body: 42 }]])('turn %j is 422 INVALID_REQUEST', async (input) => {
    const res = await call('POST', `/projects/${project()}/plan-session/turns`, input);
    expect([res.status, res.body.code]).toEqual([422, 'INVALID_REQUEST']);
  });

  test.each(ops)('%s: 401, 403 without ai:plan, 404 for an unknown or unreachable project', async (path, body) => {
    const unauth = await call('POST', `/projects/PROJ/${path}`, body, null);
    expect([unauth.status, unauth.body.code]).toEqual([401, 'UNAUTHORIZED']);
    const noPlan = await call('POST', `/projects/PROJ/${path}`, body, tokenWith(svc, ['project:browse', 'work_item:edit', 'sprint:manage']));
    expect([noPlan.status, noPlan.body.code]).toEqual([403, 'FORBIDDEN']);
    const missing = await call('POST', `/projects/NOPE/${path}`, body);
    expect([missing.status, missing.body.code]).toEqual([404, 'NOT_FOUND']);
    const narrowed = await call('POST', `/projects/PROJ/${path}`, body, tokenWith(svc, ['ai:plan'], project()));
    expect([narrowed.status, narrowed.body.code]).toEqual([404, 'NOT_FOUND']);
  });
});
