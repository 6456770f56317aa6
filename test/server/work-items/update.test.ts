// updateWorkItem: a merge update guarded by If-Match (412), null clears, unknown properties are 422,
// and re-parenting follows the kind rules.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestService, type TestService } from '../../support/service.js';

let s: TestService;
const P = 'PROJ';
const patch = (key: string, body: unknown, headers?: Record<string, string>, token?: string) => s.call('PATCH', `/work-items/${key}`, { body, headers, token });
const newItem = (fields: Omit<Parameters<TestService['admin']['createWorkItem']>[0], 'projectKey'>) => s.admin.createWorkItem({ projectKey: P, ...fields }).key;

beforeAll(async () => {
  s = await startTestService();
});
afterAll(() => s.close());

describe('PATCH /work-items/{key}', () => {
  test('absent fields are untouched, present ones set, null clears; the ETag moves', async () => {
    const key = newItem({ kind: 'task', title: 'Before', descriptionMd: 'keep me', storyPoints: 3, type: 'code', assigneeId: s.userId });
    const before = await s.call('GET', `/work-items/${key}`);
    const r = await patch(key, { title: 'After', storyPoints: null, assigneeId: null, priority: 'high' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ title: 'After', descriptionMd: 'keep me', storyPoints: null, assigneeId: null, priority: 'high', type: 'code' });
    expect(r.headers.etag).not.toBe(before.headers.etag);
    expect(r.body.updatedAt >= before.body.updatedAt).toBe(true);
    expect((await s.call('GET', `/work-items/${key}`)).body).toMatchObject({ title: 'After', storyPoints: null });
  });

  test('explanationMd is accepted', async () => {
    const key = newItem({ kind: 'task', title: 'x' });
    const r = await patch(key, { title: 'y', explanationMd: 'because the spec changed' });
    expect(r.status).toBe(200);
    expect(r.body.title).toBe('y');
  });

  test('If-Match with the current ETag succeeds; a stale one is 412 and changes nothing', async () => {
    const key = newItem({ kind: 'task', title: 'v1' });
    const etag = (await s.call('GET', `/work-items/${key}`)).headers.etag!;
    const ok = await patch(key, { title: 'v2' }, { 'if-match': etag });
    expect(ok.status).toBe(200);
    const stale = await patch(key, { title: 'v3' }, { 'if-match': etag });
    expect(stale.status).toBe(412);
    expect(stale.body.code).toBe('PRECONDITION_FAILED');
    expect((await s.call('GET', `/work-items/${key}`)).body.title).toBe('v2');
    expect((await patch(key, { title: 'v4' }, { 'if-match': ok.headers.etag! })).status).toBe(200);
    expect((await patch(key, { title: 'v5' }, { 'if-match': '*' })).status).toBe(200);
  });

  test('a change made elsewhere (status, link) moves the ETag too', async () => {
    const key = newItem({ kind: 'task', title: 'x' });
    const etag = (await s.call('GET', `/work-items/${key}`)).headers.etag!;
    s.admin.setStatus(key, 'in_progress');
    expect((await patch(key, { title: 'y' }, { 'if-match': etag })).status).toBe(412);
  });

  test('without If-Match the last write wins', async () => {
    const key = newItem({ kind: 'task', title: 'x' });
    await patch(key, { title: 'first' });
    await patch(key, { title: 'second' });
    expect((await s.call('GET', `/work-items/${key}`)).body.title).toBe('second');
  });

  test.each([
    ['unknown property', { colour: 'red' }, /colour/],
    ['title null', { title: null }, /title/],
    ['empty title', { title: '' }, /title/],
    ['kind null', { kind: null }, /kind/],
    ['bad priority', { priority: 'urgent' }, /priority/],
    ['storyPoints too large', { storyPoints: 10000.5 }, /storyPoints/],
    ['estimate not an integer', { estimateMinutes: 2.5 }, /estimateMinutes/],
    ['dueDate with offset', { dueDate: '2030-01-01T00:00:00+01:00' }, /dueDate/],
    ['targetRepositories null', { targetRepositories: null }, /targetRepositories/],
  ])('%s is 422', async (_n, body, message) => {
    const key = newItem({ kind: 'task', title: 'x' });
    const r = await patch(key, body);
    expect(r.status).toBe(422);
    expect(r.body.code).toBe('INVALID_REQUEST');
    expect(r.body.error).toMatch(message);
  });

  describe('re-parenting follows the kind rules', () => {
    test('a subtask moves between legal parents; to none or an epic is 422', async () => {
      const epic = newItem({ kind: 'epic', title: 'E' });
      const story = newItem({ kind: 'story', title: 'S' });
      const bug = newItem({ kind: 'bug', title: 'B' });
      const sub = newItem({ kind: 'subtask', title: 'st', parentKey: story });
      const moved = await patch(sub, { parentKey: bug });
      expect(moved.status).toBe(200);
      expect(moved.body.parentKey).toBe(bug);
      expect((await patch(sub, { parentKey: null })).status).toBe(422);
      expect((await patch(sub, { parentKey: epic })).status).toBe(422);
      expect((await s.call('GET', `/work-items/${bug}`)).body.children.map((c: { key: string }) => c.key)).toEqual([sub]);
    });

    test('a story leaves its epic with parentKey null', async () => {
      const epic = newItem({ kind: 'epic', title: 'E' });
      const story = newItem({ kind: 'story', title: 'S', parentKey: epic });
      const r = await patch(story, { parentKey: null });
      expect(r.status).toBe(200);
      expect(r.body.parentKey).toBeNull();
      expect(r.body.ancestorKeys).toEqual([]);
    });

    test('a kind change must fit the current parent and the children', async () => {
      const story = newItem({ kind: 'story', title: 'S' });
      newItem({ kind: 'subtask', title: 'st', parentKey: story });
      expect((await patch(story, { kind: 'epic' })).status).toBe(422);
      const r = await patch(story, { kind: 'task' });
      expect(r.status).toBe(200);
      expect(r.body.kind).toBe('task');
      const epic = newItem({ kind: 'epic', title: 'E' });
      const bug = newItem({ kind: 'bug', title: 'B', parentKey: newItem({ kind: 'story', title: 'S2' }) });
      expect((await patch(bug, { kind: 'task' })).status).toBe(422);
      expect((await patch(bug, { kind: 'task', parentKey: epic })).status).toBe(200);
    });

    test('a parent in another project, or a missing one, is 422', async () => {
      s.admin.createProject({ workspaceId: s.workspaceId, key: 'OTH', name: 'Other' });
      const foreign = s.admin.createWorkItem({ projectKey: 'OTH', kind: 'story', title: 'S' }).key;
      const sub = newItem({ kind: 'subtask', title: 'st', parentKey: newItem({ kind: 'task', title: 'T' }) });
      expect((await patch(sub, { parentKey: foreign })).status).toBe(422);
      expect((await patch(sub, { parentKey: 'PROJ-99999' })).status).toBe(422);
    });
  });

  test.each([
    ['missing item', () => 'PROJ-99999', undefined],
    [
      'item outside the narrowed project',
      () => {
        s.admin.createProject({ workspaceId: s.workspaceId, key: 'NAR', name: 'Narrow' });
        return newItem({ kind: 'task', title: 'x' });
      },
      'NAR',
    ],
  ])('%s is 404', async (_n, key, narrowTo) => {
    const target = key();
    const token = narrowTo ? s.admin.createToken({ workspaceId: s.workspaceId, userId: s.userId, projectKey: narrowTo }).token : undefined;
    const r = await patch(target, { title: 'x' }, undefined, token);
    expect(r.status).toBe(404);
    expect(r.body.code).toBe('NOT_FOUND');
  });
});
