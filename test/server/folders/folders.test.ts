// listFolders, createFolder, getFolder against the real local service: listing in tree order, create, read, and the
// status and error code of every way they can be refused.
import { describe, expect, test } from 'vitest';
import { tokenWith } from '../support/http.js';
import { useProjectService } from '../support/project-service.js';

const { svc, call, project } = useProjectService('F', 'Folders');
/** Numbers the other names a test needs unique (workspaces, members-only projects, folders). */
let n = 0;

async function folder(key: string, name: string, parentFolderId?: string | null): Promise<string> {
  const res = await call('POST', `/projects/${key}/folders`, parentFolderId === undefined ? { name } : { name, parentFolderId });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id as string;
}

/** Another workspace with its own project, folder and token. */
async function foreignWorkspace(): Promise<{ folderId: string; token: string }> {
  const ws = svc.admin.createWorkspace({ name: `Other ${++n}`, slug: `other-${n}` });
  const user = svc.admin.createUser({ name: 'Olga', email: `olga${n}@other.example` });
  svc.admin.addMember(ws.id, user.id);
  svc.admin.createProject({ workspaceId: ws.id, key: 'OTHER', name: 'Other' });
  const { token } = svc.admin.createToken({ workspaceId: ws.id, userId: user.id });
  const res = await call('POST', '/projects/OTHER/folders', { name: 'Theirs' }, token);
  expect(res.status).toBe(201);
  return { folderId: res.body.id, token };
}

describe('POST /projects/{projectKey}/folders (createFolder)', () => {
  test('creates at the root with a Location header, the name trimmed', async () => {
    const key = project();
    const res = await call('POST', `/projects/${key}/folders`, { name: '  Design  ' });
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe(`/api/v1/folders/${res.body.id}`);
    expect(res.body).toMatchObject({ projectKey: key, parentFolderId: null, name: 'Design', path: ['Design'] });
    expect(res.body.createdAt).toBe(res.body.updatedAt);
  });

  test('appends last among its siblings and carries the path from the root', async () => {
    const key = project();
    const top = await folder(key, 'Top');
    const a = await call('POST', `/projects/${key}/folders`, { name: 'A', parentFolderId: top });
    const b = await call('POST', `/projects/${key}/folders`, { name: 'B', parentFolderId: top });
    expect(a.body.path).toEqual(['Top', 'A']);
    expect(b.body.position > a.body.position).toBe(true);
    const list = await call('GET', `/projects/${key}/folders?parentFolderId=${top}`);
    expect(list.body.items.map((f: { name: string }) => f.name)).toEqual(['A', 'B']);
  });

  test('a sibling name in another case is FOLDER_NAME_TAKEN (409); the same name elsewhere is fine', async () => {
    const key = project();
    const top = await folder(key, 'Docs');
    await folder(key, 'docs', top);
    const res = await call('POST', `/projects/${key}/folders`, { name: 'DOCS' });
    expect([res.status, res.body.code]).toEqual([409, 'FOLDER_NAME_TAKEN']);
  });

  test.each([
    ['empty after trimming', '   '],
    ['longer than 120 characters', 'x'.repeat(121)],
  ])('a name %s is 422 INVALID_FOLDER_NAME', async (_why, name) => {
    const res = await call('POST', `/projects/${project()}/folders`, { name });
    expect([res.status, res.body.code]).toEqual([422, 'INVALID_FOLDER_NAME']);
  });

  test('120 characters after trimming is accepted', async () => {
    const res = await call('POST', `/projects/${project()}/folders`, { name: ` ${'y'.repeat(120)} ` });
    expect(res.status).toBe(201);
  });

  test('a parent in another project of the workspace is 422 CROSS_PROJECT_FOLDER', async () => {
    const elsewhere = await folder(project(), 'Elsewhere');
    const res = await call('POST', `/projects/${project()}/folders`, { name: 'Child', parentFolderId: elsewhere });
    expect([res.status, res.body.code]).toEqual([422, 'CROSS_PROJECT_FOLDER']);
  });

  test.each([
    ['a nonexistent id', async () => 'fld_doesnotexist'],
    ['a folder of another workspace', async () => (await foreignWorkspace()).folderId],
  ])('a parent that is %s is 404 FOLDER_NOT_FOUND', async (_why, parent) => {
    const res = await call('POST', `/projects/${project()}/folders`, { name: 'Child', parentFolderId: await parent() });
    expect([res.status, res.body.code]).toEqual([404, 'FOLDER_NOT_FOUND']);
  });

  test('unknown properties are 422 INVALID_REQUEST', async () => {
    const res = await call('POST', `/projects/${project()}/folders`, { name: 'A', colour: 'red' });
    expect([res.status, res.body.code]).toEqual([422, 'INVALID_REQUEST']);
  });
});

describe('GET /projects/{projectKey}/folders (listFolders)', () => {
  test('lists one level in tree order, paged by signed cursors', async () => {
    const key = project();
    for (const name of ['a', 'b', 'c', 'd', 'e']) await folder(key, name);
    const first = await call('GET', `/projects/${key}/folders?limit=2`);
    expect(first.body.items.map((f: { name: string }) => f.name)).toEqual(['a', 'b']);
    const second = await call('GET', `/projects/${key}/folders?limit=2&cursor=${first.body.nextCursor}`);
    const third = await call('GET', `/projects/${key}/folders?limit=2&cursor=${second.body.nextCursor}`);
    expect(second.body.items.map((f: { name: string }) => f.name)).toEqual(['c', 'd']);
    expect(third.body.items.map((f: { name: string }) => f.name)).toEqual(['e']);
    expect(third.body.nextCursor).toBeNull();
  });

  test('an empty parentFolderId is the root; a limit above 100 is clamped, not refused', async () => {
    const key = project();
    await folder(key, 'only');
    const res = await call('GET', `/projects/${key}/folders?parentFolderId=&limit=1000`);
    expect(res.status).toBe(200);
    expect(res.body.items).toHaveLength(1);
  });

  test.each([['0'], ['-3'], ['ten']])('limit=%s is 422', async (limit) => {
    const res = await call('GET', `/projects/${project()}/folders?limit=${limit}`);
    expect([res.status, res.body.code]).toEqual([422, 'INVALID_REQUEST']);
  });

  test('a cursor of another collection is 422, never a silent reset', async () => {
    const key = project();
    const top = await folder(key, 'top');
    await folder(key, 'x', top);
    await folder(key, 'y', top);
    const page = await call('GET', `/projects/${key}/folders?parentFolderId=${top}&limit=1`);
    const res = await call('GET', `/projects/${key}/folders?limit=1&cursor=${page.body.nextCursor}`);
    expect([res.status, res.body.code]).toEqual([422, 'INVALID_REQUEST']);
  });

  test.each([
    ['nonexistent', async () => 'fld_nope'],
    ['of another project', async () => folder(project(), 'theirs')],
    ['of another workspace', async () => (await foreignWorkspace()).folderId],
  ])('a parentFolderId %s is 404 FOLDER_NOT_FOUND', async (_why, parent) => {
    const res = await call('GET', `/projects/${project()}/folders?parentFolderId=${await parent()}`);
    expect([res.status, res.body.code]).toEqual([404, 'FOLDER_NOT_FOUND']);
  });
});

describe('GET /folders/{folderId} (getFolder)', () => {
  test('answers the folder', async () => {
    const key = project();
    const top = await folder(key, 'Top');
    const child = await folder(key, 'Child', top);
    const res = await call('GET', `/folders/${child}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: child, projectKey: key, parentFolderId: top, path: ['Top', 'Child'] });
  });

  test.each([
    ['nonexistent', async () => ({ id: 'fld_nope', token: svc.token })],
    ['in another workspace', async () => ({ id: (await foreignWorkspace()).folderId, token: svc.token })],
    ['in a project the token is not bound to', async () => ({ id: await folder(project(), 'hidden'), token: tokenWith(svc, ['project:browse'], project()) })],
    [
      'in a members-only project the caller is not a member of',
      async () => {
        const key = `M${++n}`;
        svc.admin.createProject({ workspaceId: svc.workspaceId, key, name: 'Members only' });
        const id = await folder(key, 'secret');
        svc.admin.db.prepare(`UPDATE projects SET access_mode = 'members' WHERE key = ?`).run(key);
        return { id, token: svc.token };
      },
    ],
  ])('a folder %s is the same 404', async (_why, make) => {
    const { id, token } = await make();
    const res = await call('GET', `/folders/${id}`, undefined, token);
    expect([res.status, res.body.code]).toEqual([404, 'NOT_FOUND']);
  });
});

describe('authentication and permissions of ops 13–17', () => {
  const paths = async (key: string) => {
    const id = await folder(key, `f${++n}`);
    return [
      ['GET', `/projects/${key}/folders`, undefined, 'project:browse'],
      ['POST', `/projects/${key}/folders`, { name: 'new' }, 'work_item:edit'],
      ['GET', `/folders/${id}`, undefined, 'project:browse'],
      ['PATCH', `/folders/${id}`, { name: 'renamed' }, 'work_item:edit'],
      ['DELETE', `/folders/${id}`, undefined, 'work_item:edit'],
    ] as const;
  };

  test('no token, or an unknown one, is 401 on every folder operation', async () => {
    for (const [method, path, body] of await paths(project())) {
      for (const token of [null, 'svc_pat_0000000000000000000000000000dead']) {
        const res = await call(method, path, body, token);
        expect([method, path, res.status, res.body.code]).toEqual([method, path, 401, 'UNAUTHORIZED']);
      }
    }
  });

  test('a token without the operation permission is 403', async () => {
    const key = project();
    for (const [method, path, body, needed] of await paths(key)) {
      const others = ['project:browse', 'work_item:edit', 'sprint:manage', 'ai:plan'].filter((s) => s !== needed);
      const res = await call(method, path, body, tokenWith(svc, others));
      expect([method, path, res.status, res.body.code]).toEqual([method, path, 403, 'FORBIDDEN']);
    }
  });

  test.each([['GET'], ['POST']])('%s on an unknown project is 404', async (method) => {
    const res = await call(method, '/projects/NOPE/folders', method === 'POST' ? { name: 'x' } : undefined);
    expect([res.status, res.body.code]).toEqual([404, 'NOT_FOUND']);
  });
});
