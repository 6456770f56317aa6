// What the local service's lanes do with an item an implemented leg recorded (DISPATCH §8,
// docs/dispatch.md "Work advances"): `in_review` is still open (a blocker in review still blocks,
// readiness is unchanged), but the lanes leave it out: the work exists and waits for a person.
// The status is set through op 9 only to one of the service's statuses.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestService, type TestService } from '../../support/service.js';

let s: TestService;
const P = 'PROJ';
beforeAll(async () => {
  s = await startTestService();
});
afterAll(async () => {
  await s.close();
});

const patch = (key: string, body: unknown) => s.call('PATCH', `/work-items/${key}`, { body });
const lane = async (name: 'bugs' | 'containers') => {
  const r = await s.call('GET', `/projects/${P}/ready/${name}`);
  expect(r.status).toBe(200);
  return r.body.items as { key?: string; container?: { key: string } | null; items?: { key: string }[]; readyLeafCount?: number }[];
};
const listed = async (filter: string) =>
  (await s.call('GET', `/projects/${P}/work-items?filter=${encodeURIComponent(filter)}`)).body.items.map((i: { key: string }) => i.key);

describe('in_review items and the ready lanes', () => {
  test('op 9 sets the status and the implementation; the lanes drop the item, readiness does not', async () => {
    const bug = s.admin.createWorkItem({ projectKey: P, kind: 'bug', title: 'bug' }).key;
    const story = s.admin.createWorkItem({ projectKey: P, kind: 'story', title: 'story' }).key;
    const [t1, t2] = ['one', 'two'].map((title) => s.admin.createWorkItem({ projectKey: P, kind: 'subtask', title, parentKey: story }).key) as [string, string];
    expect((await lane('bugs')).map((g) => g.items!.map((i) => i.key))).toEqual([[bug]]);
    expect((await lane('containers')).map((c) => [c.key, c.readyLeafCount])).toEqual([[story, 2]]);

    const r = await patch(bug, { status: 'in_review', implementationSource: 'byok', implementationHarness: 'claude', implementationModel: null });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ status: 'in_review', statusCategory: 'in_progress', implementationSource: 'byok', implementationHarness: 'claude' });
    expect(r.body.readiness.ready).toBe(true);
    expect(await lane('bugs')).toEqual([]);

    expect((await patch(t1, { status: 'in_review' })).status).toBe(200);
    expect((await lane('containers')).map((c) => [c.key, c.readyLeafCount])).toEqual([[story, 1]]);
    expect((await patch(t2, { status: 'in_review' })).status).toBe(200);
    expect(await lane('containers')).toEqual([]);
    // The leaves lane of batch/auto is op 5's filter: `ready:true` still holds them; the client adds -status:in_review.
    expect(await listed('ready:true leaf:true')).toEqual(expect.arrayContaining([bug, t1, t2]));
    expect(await listed('ready:true leaf:true -status:in_review')).toEqual([]);

    // Back to todo (a reviewer sent it back): in the lanes again.
    expect((await patch(bug, { status: 'todo' })).status).toBe(200);
    expect((await lane('bugs')).map((g) => g.items!.map((i) => i.key))).toEqual([[bug]]);
  });

  test('an in_review blocker still blocks', async () => {
    const blocker = s.admin.createWorkItem({ projectKey: P, kind: 'task', title: 'blocker', status: 'in_review' }).key;
    const blocked = s.admin.createWorkItem({ projectKey: P, kind: 'task', title: 'blocked' }).key;
    s.admin.addLink(blocker, blocked, 'blocks');
    expect((await s.call('GET', `/work-items/${blocked}`)).body.readiness.ready).toBe(false);
  });

  test.each([
    [{ status: 'shipped' }, 'status: unknown status "shipped" (todo, in_progress, in_review, done, cancelled)'],
    [{ status: '' }, 'status'],
    [{ implementationSource: 'robot' }, 'implementationSource'],
  ])('a bad record %j is a 422 that changes nothing', async (body, message) => {
    const key = s.admin.createWorkItem({ projectKey: P, kind: 'task', title: 'x' }).key;
    const before = await s.call('GET', `/work-items/${key}`);
    const r = await patch(key, body);
    expect([r.status, r.body.code]).toEqual([422, 'INVALID_REQUEST']);
    expect(r.body.error).toContain(message);
    expect((await s.call('GET', `/work-items/${key}`)).headers.etag).toBe(before.headers.etag);
  });
});
