// getMe, listWorkspaces, listProjects, getProject: identity, the owner's workspaces, browsable projects, and the paging rules they
// share with every list.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestService, type TestService } from '../../support/service.js';

let s: TestService;
let otherWs: { id: string };
let memberOnly: { id: string };
beforeAll(async () => {
  s = await startTestService();
  // A second workspace the user also belongs to, and one they do not.
  otherWs = s.admin.createWorkspace({ name: 'Second', slug: 'second' });
  s.admin.addMember(otherWs.id, s.userId);
  const foreign = s.admin.createWorkspace({ name: 'Foreign', slug: 'foreign' });
  s.admin.createProject({ workspaceId: foreign.id, key: 'FOR', name: 'Foreign project' });
  s.admin.createProject({ workspaceId: otherWs.id, key: 'SEC', name: 'Second project' });
  // Projects of the bound workspace in each access mode.
  s.admin.createProject({ workspaceId: s.workspaceId, key: 'PUB', name: 'Public', accessMode: 'public' });
  s.admin.createProject({ workspaceId: s.workspaceId, key: 'MEM', name: 'Members', accessMode: 'members' });
  s.admin.createProject({ workspaceId: s.workspaceId, key: 'OLD', name: 'Old', archived: true });
  s.admin.addProjectMember('MEM', s.userId, s.workspaceId);
  const outsider = s.admin.createUser({ name: 'Olga', email: 'olga@test.example' });
  s.admin.addMember(s.workspaceId, outsider.id);
  memberOnly = outsider;
  for (let i = 0; i < 7; i++) {
    const ws = s.admin.createWorkspace({ name: `Extra ${i}`, slug: `extra-${i}` });
    s.admin.addMember(ws.id, s.userId);
  }
});
afterAll(() => s.close());

test('GET /me names the owner, the bound workspace and the granted scopes', async () => {
  const token = s.admin.createToken({ workspaceId: s.workspaceId, userId: s.userId, scopes: ['project:browse', 'ai:plan'] }).token;
  const r = await s.call('GET', '/me', { token });
  expect(r.status).toBe(200);
  expect(r.body).toEqual({
    user: { id: s.userId, name: 'Tess Tester', email: 'tess@test.example' },
    workspaceId: s.workspaceId,
    permissions: ['project:browse', 'ai:plan'],
  });
});

describe('GET /workspaces', () => {
  test('lists exactly the workspaces the owner belongs to, across pages', async () => {
    const slugs: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const r = await s.call('GET', `/workspaces?limit=4${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(r.status).toBe(200);
      expect(r.body.items.length).toBeLessThanOrEqual(4);
      slugs.push(...r.body.items.map((w: { slug: string }) => w.slug));
      cursor = r.body.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(slugs.sort()).toEqual(['extra-0', 'extra-1', 'extra-2', 'extra-3', 'extra-4', 'extra-5', 'extra-6', 'second', 'test']);
    expect(slugs).not.toContain('foreign');
  });

  test('rows carry id, name, slug, createdAt', async () => {
    const r = await s.call('GET', '/workspaces?limit=1');
    expect(Object.keys(r.body.items[0]).sort()).toEqual(['createdAt', 'id', 'name', 'slug']);
  });
});

describe('GET /projects', () => {
  test('lists browsable projects of the bound workspace by key, with accessMode and derived accessLevel', async () => {
    const r = await s.call('GET', '/projects');
    expect(r.status).toBe(200);
    expect(r.body.items).toEqual([
      { key: 'MEM', name: 'Members', accessMode: 'members', accessLevel: 'private', archived: false },
      { key: 'OLD', name: 'Old', accessMode: 'workspace', accessLevel: 'open', archived: true },
      { key: 'PROJ', name: 'Test project', accessMode: 'workspace', accessLevel: 'open', archived: false },
      { key: 'PUB', name: 'Public', accessMode: 'public', accessLevel: 'public', archived: false },
    ]);
    expect(r.body.nextCursor).toBeNull();
  });

  test('a members-only project is hidden from a workspace member outside it', async () => {
    const token = s.admin.createToken({ workspaceId: s.workspaceId, userId: memberOnly.id }).token;
    const r = await s.call('GET', '/projects', { token });
    expect(r.body.items.map((p: { key: string }) => p.key)).toEqual(['OLD', 'PROJ', 'PUB']);
    expect((await s.call('GET', '/projects/MEM', { token })).status).toBe(404);
  });

  test('a token narrowed to one project lists exactly that project', async () => {
    const token = s.admin.createToken({ workspaceId: s.workspaceId, userId: s.userId, projectKey: 'PUB' }).token;
    const r = await s.call('GET', '/projects', { token });
    expect(r.body.items.map((p: { key: string }) => p.key)).toEqual(['PUB']);
    expect((await s.call('GET', '/projects/PROJ', { token })).status).toBe(404);
    expect((await s.call('GET', '/projects/PUB', { token })).status).toBe(200);
  });

  test('a token bound to another workspace sees that workspace only', async () => {
    const token = s.admin.createToken({ workspaceId: otherWs.id, userId: s.userId }).token;
    const r = await s.call('GET', '/projects', { token });
    expect(r.body.items.map((p: { key: string }) => p.key)).toEqual(['SEC']);
  });
});

describe('GET /projects/{projectKey}', () => {
  test('answers the project', async () => {
    const r = await s.call('GET', '/projects/PROJ');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ key: 'PROJ', name: 'Test project', accessMode: 'workspace', accessLevel: 'open', archived: false });
  });

  test.each([
    ['missing', 'NOPE'],
    ['in another workspace', 'FOR'],
    ['in another workspace of the same user', 'SEC'],
    ['lower-case key', 'proj'],
  ])('a project %s is 404 NOT_FOUND', async (_name, key) => {
    const r = await s.call('GET', `/projects/${key}`);
    expect(r.status).toBe(404);
    expect(r.body.code).toBe('NOT_FOUND');
  });
});

describe('paging parameters', () => {
  test.each([
    ['limit=0', 'limit=0'],
    ['negative limit', 'limit=-3'],
    ['non-integer limit', 'limit=2.5'],
    ['non-numeric limit', 'limit=ten'],
    ['empty limit', 'limit='],
    ['garbage cursor', 'cursor=garbage'],
    ['forged cursor', `cursor=${Buffer.from(JSON.stringify({ c: 'workspaces:x', o: 1 })).toString('base64url')}.AAAA`],
  ])('%s is 422 INVALID_REQUEST', async (_name, qs) => {
    for (const path of ['/workspaces', '/projects']) {
      const r = await s.call('GET', `${path}?${qs}`);
      expect(r.status).toBe(422);
      expect(r.body.code).toBe('INVALID_REQUEST');
    }
  });

  test('a limit above 100 is clamped, not rejected', async () => {
    const r = await s.call('GET', '/workspaces?limit=1000');
    expect(r.status).toBe(200);
    expect(r.body.items.length).toBe(9);
  });

  test('a cursor issued by another collection is 422, never a silent reset', async () => {
    const ws = await s.call('GET', '/workspaces?limit=1');
    expect(ws.body.nextCursor).toEqual(expect.any(String));
    const r = await s.call('GET', `/projects?cursor=${encodeURIComponent(ws.body.nextCursor)}`);
    expect(r.status).toBe(422);
    expect(r.body.error).toMatch(/another collection/);
  });

  test('a tampered cursor is 422', async () => {
    const ws = await s.call('GET', '/workspaces?limit=1');
    const [payload, sig] = (ws.body.nextCursor as string).split('.');
    const forged = `${Buffer.from(JSON.stringify({ c: JSON.parse(Buffer.from(payload!, 'base64url').toString()).c, o: 5 })).toString('base64url')}.${sig}`;
    expect((await s.call('GET', `/workspaces?cursor=${encodeURIComponent(forged)}`)).status).toBe(422);
  });
});
