// updateFolder (rename or placement) and 17 (delete, keeping the contents) against the real
// local service.
import { describe, expect, test } from 'vitest';
import { useProjectService } from '../support/project-service.js';

const { svc, call, project } = useProjectService('G', 'Moves');

async function folder(key: string, name: string, parentFolderId?: string): Promise<string> {
  const res = await call('POST', `/projects/${key}/folders`, parentFolderId ? { name, parentFolderId } : { name });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id as string;
}

async function names(key: string, parent?: string): Promise<string[]> {
  const res = await call('GET', `/projects/${key}/folders${parent ? `?parentFolderId=${parent}` : ''}`);
  expect(res.status).toBe(200);
  return res.body.items.map((f: { name: string }) => f.name);
}

const positions = (key: string): Map<string, string> =>
  new Map(
    (
      svc.db.prepare('SELECT f.id, f.position FROM folders f JOIN projects p ON p.id = f.project_id WHERE p.key = ?').all(key) as {
        id: string;
        position: string;
      }[]
    ).map((r) => [r.id, r.position]),
  );

/** Project with root folders A, B, C (in that order). */
async function abc(): Promise<{ key: string; A: string; B: string; C: string }> {
  const key = project();
  return { key, A: await folder(key, 'A'), B: await folder(key, 'B'), C: await folder(key, 'C') };
}

describe('PATCH /folders/{folderId} (updateFolder)', () => {
  test('a rename answers the folder; its own name in another case is no clash', async () => {
    const { A } = await abc();
    const res = await call('PATCH', `/folders/${A}`, { name: '  Alpha ' });
    expect([res.status, res.body.name, res.body.path]).toEqual([200, 'Alpha', ['Alpha']]);
    const recased = await call('PATCH', `/folders/${A}`, { name: 'ALPHA' });
    expect([recased.status, recased.body.name]).toEqual([200, 'ALPHA']);
  });

  test('a rename onto a sibling name, in any case, is 409 FOLDER_NAME_TAKEN', async () => {
    const { A } = await abc();
    const res = await call('PATCH', `/folders/${A}`, { name: 'b' });
    expect([res.status, res.body.code]).toEqual([409, 'FOLDER_NAME_TAKEN']);
  });

  test.each([['   '], ['z'.repeat(121)]])('a rename to %j is 422 INVALID_FOLDER_NAME', async (name) => {
    const { A } = await abc();
    const res = await call('PATCH', `/folders/${A}`, { name });
    expect([res.status, res.body.code]).toEqual([422, 'INVALID_FOLDER_NAME']);
  });

  // The contract's wording: beforeId is the sibling that will sort BEFORE the folder (it goes
  // right after it); afterId is the sibling that will sort AFTER it (it goes right before it).
  test.each([
    ['beforeId=A puts C right after A', 'C', { beforeId: 'A' }, ['A', 'C', 'B']],
    ['afterId=A puts C right before A', 'C', { afterId: 'A' }, ['C', 'A', 'B']],
    ['afterId=C puts A right before C', 'A', { afterId: 'C' }, ['B', 'A', 'C']],
    ['beforeId=C puts A last', 'A', { beforeId: 'C' }, ['B', 'C', 'A']],
    ['beforeId=A with afterId=B puts C between them', 'C', { beforeId: 'A', afterId: 'B' }, ['A', 'C', 'B']],
    ['beforeId=null puts C first', 'C', { beforeId: null }, ['C', 'A', 'B']],
    ['afterId=null puts A last', 'A', { afterId: null }, ['B', 'C', 'A']],
    ['the current parent and no anchor leaves it in place', 'B', { parentFolderId: null }, ['A', 'B', 'C']],
  ])('reorder: %s, rewriting only the moved row', async (_why, moved, anchors, expected) => {
    const f = await abc();
    const ids = { A: f.A, B: f.B, C: f.C } as Record<string, string>;
    const body = Object.fromEntries(Object.entries(anchors).map(([k, v]) => [k, v === null ? null : ids[v as string]]));
    const before = positions(f.key);
    const res = await call('PATCH', `/folders/${ids[moved]}`, body);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(await names(f.key)).toEqual(expected);
    const after = positions(f.key);
    for (const [id, pos] of before) if (id !== ids[moved]) expect(after.get(id)).toBe(pos);
  });

  test('repeated moves between the same neighbours keep a strict order', async () => {
    const { key, A, B, C } = await abc();
    for (let i = 0; i < 30; i++) {
      const moved = i % 2 === 0 ? C : B;
      const res = await call('PATCH', `/folders/${moved}`, { beforeId: A });
      expect(res.status).toBe(200);
    }
    expect(await names(key)).toEqual(['A', 'B', 'C']);
  });

  test('moves into another folder (appended last) and to the root', async () => {
    const { key, A, B, C } = await abc();
    await folder(key, 'inner', A);
    const into = await call('PATCH', `/folders/${C}`, { parentFolderId: A });
    expect([into.status, into.body.parentFolderId, into.body.path]).toEqual([200, A, ['A', 'C']]);
    expect(await names(key, A)).toEqual(['inner', 'C']);
    const placed = await call('PATCH', `/folders/${B}`, { parentFolderId: A, afterId: C });
    expect(placed.status).toBe(200);
    expect(await names(key, A)).toEqual(['inner', 'B', 'C']);
    const back = await call('PATCH', `/folders/${C}`, { parentFolderId: null, beforeId: null });
    expect([back.status, back.body.parentFolderId]).toEqual([200, null]);
    expect(await names(key)).toEqual(['C', 'A']);
  });

  test('a name clash at the destination is 409 FOLDER_NAME_TAKEN and nothing moves', async () => {
    const { key, A, B } = await abc();
    await folder(key, 'b', A);
    const res = await call('PATCH', `/folders/${B}`, { parentFolderId: A });
    expect([res.status, res.body.code]).toEqual([409, 'FOLDER_NAME_TAKEN']);
    expect(await names(key)).toEqual(['A', 'B', 'C']);
  });

  test.each([
    ['into itself', (_c: string, self: string) => self],
    ['into its child', (child: string) => child],
    ['into its grandchild', (_c: string, _s: string, grandchild: string) => grandchild],
  ])('moving a folder %s is 422 FOLDER_CYCLE', async (_why, pick) => {
    const { key, A } = await abc();
    const child = await folder(key, 'child', A);
    const grandchild = await folder(key, 'grandchild', child);
    const res = await call('PATCH', `/folders/${A}`, { parentFolderId: pick(child, A, grandchild) });
    expect([res.status, res.body.code]).toEqual([422, 'FOLDER_CYCLE']);
  });

  test.each([
    ['a destination', 'parentFolderId'],
    ['an anchor', 'beforeId'],
  ])('%s in another project is 422 CROSS_PROJECT_FOLDER', async (_why, field) => {
    const { A } = await abc();
    const elsewhere = await folder(project(), 'Elsewhere');
    const res = await call('PATCH', `/folders/${A}`, { [field]: elsewhere });
    expect([res.status, res.body.code]).toEqual([422, 'CROSS_PROJECT_FOLDER']);
  });

  test.each([
    ['a destination', 'parentFolderId'],
    ['an anchor', 'afterId'],
  ])('%s that does not exist is 404 FOLDER_NOT_FOUND', async (_why, field) => {
    const { A } = await abc();
    const res = await call('PATCH', `/folders/${A}`, { [field]: 'fld_nope' });
    expect([res.status, res.body.code]).toEqual([404, 'FOLDER_NOT_FOUND']);
  });

  test.each([
    ['a rename and a placement together', (f: Record<string, string>) => ({ name: 'X', parentFolderId: f.B })],
    ['a rename with an anchor', (f: Record<string, string>) => ({ name: 'X', beforeId: f.B })],
    ['an empty body', () => ({})],
    ['an anchor that is not a sibling at the destination', (f: Record<string, string>) => ({ parentFolderId: f.B, beforeId: f.C })],
    ['anchors that are not adjacent', (f: Record<string, string>) => ({ beforeId: f.A, afterId: f.C })],
    ['the folder as its own anchor', (f: Record<string, string>) => ({ beforeId: f.A })],
    ['an unknown property', () => ({ position: 'a' })],
  ])('%s is 422 INVALID_REQUEST', async (_why, make) => {
    const f = await abc();
    const res = await call('PATCH', `/folders/${f.A}`, make(f));
    expect([res.status, res.body.code]).toEqual([422, 'INVALID_REQUEST']);
  });

  test('an unknown folder is 404', async () => {
    const res = await call('PATCH', '/folders/fld_nope', { name: 'x' });
    expect([res.status, res.body.code]).toEqual([404, 'NOT_FOUND']);
  });
});

describe('DELETE /folders/{folderId} (deleteFolder)', () => {
  /** A work item filed in a folder (filing is not among the 31 operations: stored directly). */
  const file = (key: string, kind: 'task' | 'story' | 'subtask', folderId: string, parentKey?: string): string => {
    const row = svc.admin.createWorkItem({ projectKey: key, kind, title: `${kind} in folder`, parentKey });
    svc.admin.setFields(row.key, { folder_id: folderId });
    return row.key;
  };
  const folderOf = (itemKey: string) =>
    (svc.db.prepare('SELECT folder_id FROM work_items WHERE key = ?').get(itemKey) as { folder_id: string | null }).folder_id;
  const idOf = (itemKey: string) => svc.admin.workItem(itemKey).id;

  test('moves child folders into its place and filed items to the parent', async () => {
    const { key, A, B } = await abc();
    const x = await folder(key, 'x', B);
    const y = await folder(key, 'y', B);
    const inner = await folder(key, 'inner', x);
    const item = file(key, 'task', B);
    const res = await call('DELETE', `/folders/${B}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ deletedFolderId: B, destinationFolderId: null, movedFolderIds: [x, y], movedWorkItemIds: [idOf(item)] });
    expect(await names(key)).toEqual(['A', 'x', 'y', 'C']);
    expect(await names(key, x)).toEqual(['inner']);
    expect(folderOf(item)).toBeNull();
    expect((await call('GET', `/folders/${B}`)).status).toBe(404);
    expect((await call('GET', `/folders/${inner}`)).body.path).toEqual(['x', 'inner']);
    expect(A).toBeTruthy();
  });

  test('a nested folder hands its contents to its parent folder', async () => {
    const { key, A } = await abc();
    const mid = await folder(key, 'mid', A);
    const leaf = await folder(key, 'leaf', mid);
    const story = svc.admin.createWorkItem({ projectKey: key, kind: 'story', title: 'parent' });
    const sub = file(key, 'subtask', mid, story.key);
    const res = await call('DELETE', `/folders/${mid}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ destinationFolderId: A, movedFolderIds: [leaf], movedWorkItemIds: [idOf(sub)] });
    expect(folderOf(sub)).toBe(A);
  });

  test('a child name colliding at the destination is 409 FOLDER_NAME_TAKEN and nothing changes', async () => {
    const { key, B } = await abc();
    await folder(key, 'a', B); // collides with root folder "A"
    const item = file(key, 'task', B);
    const res = await call('DELETE', `/folders/${B}`);
    expect([res.status, res.body.code]).toEqual([409, 'FOLDER_NAME_TAKEN']);
    expect((await call('GET', `/folders/${B}`)).status).toBe(200);
    expect(await names(key, B)).toEqual(['a']);
    expect(folderOf(item)).toBe(B);
  });

  test('a root folder holding a parentless subtask is 409 SUBTASK_NEEDS_PLACEMENT and nothing changes', async () => {
    const { key, C } = await abc();
    const kept = await folder(key, 'kept', C);
    const story = svc.admin.createWorkItem({ projectKey: key, kind: 'story', title: 'parent' });
    const sub = file(key, 'subtask', C, story.key);
    // A parentless subtask cannot be created through the API; it arises when its parent goes away.
    svc.admin.setFields(sub, { parent_id: null });
    const res = await call('DELETE', `/folders/${C}`);
    expect([res.status, res.body.code]).toEqual([409, 'SUBTASK_NEEDS_PLACEMENT']);
    expect(folderOf(sub)).toBe(C);
    expect((await call('GET', `/folders/${kept}`)).body.parentFolderId).toBe(C);
  });

  test('a subtask with a parent does not block deleting a root folder', async () => {
    const { key, C } = await abc();
    const story = svc.admin.createWorkItem({ projectKey: key, kind: 'story', title: 'parent' });
    const sub = file(key, 'subtask', C, story.key);
    const res = await call('DELETE', `/folders/${C}`);
    expect(res.status).toBe(200);
    expect(folderOf(sub)).toBeNull();
  });

  test('an unknown folder is 404', async () => {
    const res = await call('DELETE', '/folders/fld_nope');
    expect([res.status, res.body.code]).toEqual([404, 'NOT_FOUND']);
  });
});
