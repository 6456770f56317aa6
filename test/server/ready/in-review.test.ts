// What the local service's lanes do with an item in review (docs/service.md): `in_review` is still
// open (a blocker in review still blocks, readiness is unchanged), but the lanes leave it out: the
// work exists and waits for a person. updateWorkItem is as strict as api-v1's update body: `status` and the
// `implementation*` fields are shown on the detail but are not the update's, so naming one is a
// 422 that names it (the local service changes them only through its own admin commands).
import { describe, expect, test } from 'vitest';
import { serviceForFile } from '../../support/service.js';

const s = serviceForFile();
const P = 'PROJ';

const patch = (key: string, body: unknown) => s.call('PATCH', `/work-items/${key}`, { body });
const lane = async (name: 'bugs' | 'containers') => {
  const r = await s.call('GET', `/projects/${P}/ready/${name}`);
  expect(r.status).toBe(200);
  return r.body.items as { key?: string; container?: { key: string } | null; items?: { key: string }[]; readyLeafCount?: number }[];
};

describe('in_review items and the ready lanes', () => {
  test('an item put in review (by the service) leaves the lanes; readiness does not change', async () => {
    const bug = s.admin.createWorkItem({ projectKey: P, kind: 'bug', title: 'bug' }).key;
    const story = s.admin.createWorkItem({ projectKey: P, kind: 'story', title: 'story' }).key;
    const [t1, t2] = ['one', 'two'].map((title) => s.admin.createWorkItem({ projectKey: P, kind: 'subtask', title, parentKey: story }).key) as [string, string];
    expect((await lane('bugs')).map((g) => g.items!.map((i) => i.key))).toEqual([[bug]]);
    expect((await lane('containers')).map((c) => [c.key, c.readyLeafCount])).toEqual([[story, 2]]);

    s.admin.setStatus(bug, 'in_review');
    const r = await s.call('GET', `/work-items/${bug}`);
    expect(r.body).toMatchObject({ status: 'in_review', statusCategory: 'in_progress' });
    expect(r.body.readiness.ready).toBe(true);
    expect(await lane('bugs')).toEqual([]);

    s.admin.setStatus(t1, 'in_review');
    expect((await lane('containers')).map((c) => [c.key, c.readyLeafCount])).toEqual([[story, 1]]);
    s.admin.setStatus(t2, 'in_review');
    expect(await lane('containers')).toEqual([]);

    // Back to todo (a reviewer sent it back): in the lanes again.
    s.admin.setStatus(bug, 'todo');
    expect((await lane('bugs')).map((g) => g.items!.map((i) => i.key))).toEqual([[bug]]);
  });

  test('an in_review blocker still blocks', async () => {
    const blocker = s.admin.createWorkItem({ projectKey: P, kind: 'task', title: 'blocker', status: 'in_review' }).key;
    const blocked = s.admin.createWorkItem({ projectKey: P, kind: 'task', title: 'blocked' }).key;
    s.admin.addLink(blocker, blocked, 'blocks');
    expect((await s.call('GET', `/work-items/${blocked}`)).body.readiness.ready).toBe(false);
  });

  test.each([
    [{ status: 'in_review' }, 'status'],
    [{ implementationSource: 'byok' }, 'implementationSource'],
    [{ implementationHarness: 'claude' }, 'implementationHarness'],
    [{ implementationModel: null }, 'implementationModel'],
    [{ title: 'fine', status: 'done' }, 'status'],
  ])('updateWorkItem with %j is a 422 naming the field, and changes nothing', async (body, field) => {
    const key = s.admin.createWorkItem({ projectKey: P, kind: 'task', title: 'x' }).key;
    const before = await s.call('GET', `/work-items/${key}`);
    const r = await patch(key, body);
    expect([r.status, r.body.code]).toEqual([422, 'INVALID_REQUEST']);
    expect(r.body.error).toContain(field);
    const after = await s.call('GET', `/work-items/${key}`);
    expect(after.headers.etag).toBe(before.headers.etag);
    expect(after.body.status).toBe('todo');
  });
});
