// createWorkItem, getWorkItem: creating work items under the kind-legal parent rules, and the full detail
// (ancestors, children, five link groups, readiness, ETag).
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestService, type TestService } from '../../support/service.js';

let s: TestService;
const P = 'PROJ';
const create = (body: unknown, token?: string) => s.call('POST', `/projects/${P}/work-items`, { body, token });

beforeAll(async () => {
  s = await startTestService();
  s.admin.createProject({ workspaceId: s.workspaceId, key: 'OTH', name: 'Other project' });
  s.admin.createWorkItem({ projectKey: 'OTH', kind: 'story', title: 'elsewhere' }); // OTH-1
});
afterAll(() => s.close());

describe('POST /projects/{projectKey}/work-items', () => {
  test('201 with the detail, defaults, ETag and Location', async () => {
    const r = await create({ kind: 'task', title: 'Write docs' });
    expect(r.status).toBe(201);
    expect(r.headers.etag).toMatch(/^".+"$/);
    expect(r.headers.location).toBe(`/api/v1/work-items/${r.body.key}`);
    expect(r.body).toMatchObject({
      key: expect.stringMatching(/^PROJ-\d+$/),
      kind: 'task',
      title: 'Write docs',
      type: null,
      status: 'todo',
      statusCategory: 'todo',
      priority: 'medium',
      assigneeId: null,
      reporterId: s.userId,
      parentKey: null,
      ancestorKeys: [],
      children: [],
      labels: [],
      components: [],
      deliveries: [],
      commentCount: 0,
      archivedAt: null,
      readiness: { ready: true, openBlockers: [], blockedByAncestorKey: null, blockedByAncestorTitle: null },
      links: { blockedBy: [], blocks: [], relatesTo: [], duplicates: [], clones: [] },
    });
  });

  test('every create field is stored and read back', async () => {
    const body = {
      kind: 'task',
      title: 'Full',
      descriptionMd: '# hi',
      priority: 'high',
      type: 'code',
      executor: 'coding_agent',
      storyPoints: 9999.99,
      estimateMinutes: 9007199254740991,
      targetRepo: 'acme/web',
      targetRepos: ['acme/web', 'acme/api'],
      targetRepositories: ['acme/web'],
      assigneeId: s.userId,
      dueDate: '2030-01-02T03:04:05Z',
    };
    const r = await create(body);
    expect(r.status).toBe(201);
    const read = await s.call('GET', `/work-items/${r.body.key}`);
    expect(read.body).toMatchObject({
      descriptionMd: '# hi',
      priority: 'high',
      type: 'code',
      executor: 'coding_agent',
      storyPoints: 9999.99,
      estimateMinutes: 9007199254740991,
      targetRepo: 'acme/web',
      targetRepos: ['acme/web', 'acme/api'],
      targetRepositories: [{ ref: 'acme/web', name: 'web', role: 'target', label: null, state: 'active', primary: true }],
      assigneeId: s.userId,
      dueDate: '2030-01-02T03:04:05.000Z',
    });
  });

  // Kind-legal parents (docs/service.md).
  const parents: Record<string, string> = {};
  beforeAll(async () => {
    for (const kind of ['epic', 'story', 'task', 'bug'] as const) {
      parents[kind] = (await create({ kind, title: `parent ${kind}` })).body.key;
    }
    parents.subtask = (await create({ kind: 'subtask', title: 'parent subtask', parentKey: parents.task })).body.key;
  });
  const legal: [string, string | null, boolean][] = [
    ['epic', null, true],
    ['epic', 'epic', false],
    ['epic', 'story', false],
    ['story', null, true],
    ['story', 'epic', true],
    ['story', 'story', false],
    ['story', 'task', false],
    ['story', 'bug', false],
    ['task', null, true],
    ['task', 'epic', true],
    ['task', 'story', false],
    ['task', 'task', false],
    ['bug', null, true],
    ['bug', 'epic', true],
    ['bug', 'story', true],
    ['bug', 'task', false],
    ['bug', 'bug', false],
    ['subtask', null, false],
    ['subtask', 'story', true],
    ['subtask', 'task', true],
    ['subtask', 'bug', true],
    ['subtask', 'epic', false],
    ['subtask', 'subtask', false],
  ];
  test.each(legal)('a %s under %s: legal=%s', async (kind, parentKind, ok) => {
    const r = await create({ kind, title: 'x', ...(parentKind ? { parentKey: parents[parentKind] } : {}) });
    expect(r.status).toBe(ok ? 201 : 422);
    if (ok) expect(r.body.parentKey).toBe(parentKind ? parents[parentKind] : null);
    else expect(r.body).toMatchObject({ code: 'INVALID_REQUEST', error: expect.stringMatching(/parentKey/) });
  });

  test.each([
    ['missing kind', { title: 'x' }, /kind/],
    ['missing title', { kind: 'task' }, /title/],
    ['empty title', { kind: 'task', title: '' }, /title/],
    ['unknown kind', { kind: 'saga', title: 'x' }, /kind/],
    ['unknown property', { kind: 'task', title: 'x', colour: 'red' }, /colour/],
    ['explanationMd is update-only', { kind: 'task', title: 'x', explanationMd: 'why' }, /explanationMd/],
    ['bad priority', { kind: 'task', title: 'x', priority: 'urgent' }, /priority/],
    ['bad type', { kind: 'task', title: 'x', type: 'poetry' }, /type/],
    ['bad executor', { kind: 'task', title: 'x', executor: 'robot' }, /executor/],
    ['storyPoints below 0', { kind: 'task', title: 'x', storyPoints: -1 }, /storyPoints/],
    ['storyPoints above 9999.99', { kind: 'task', title: 'x', storyPoints: 10000 }, /storyPoints/],
    ['fractional estimate', { kind: 'task', title: 'x', estimateMinutes: 1.5 }, /estimateMinutes/],
    ['negative estimate', { kind: 'task', title: 'x', estimateMinutes: -1 }, /estimateMinutes/],
    ['dueDate not UTC', { kind: 'task', title: 'x', dueDate: '2030-01-01T00:00:00+02:00' }, /dueDate/],
    ['dueDate a date only', { kind: 'task', title: 'x', dueDate: '2030-01-01' }, /dueDate/],
    ['targetRepos not strings', { kind: 'task', title: 'x', targetRepos: [1] }, /targetRepos/],
    ['parentKey malformed', { kind: 'task', title: 'x', parentKey: 'nope' }, /parentKey/],
    ['parent missing', { kind: 'subtask', title: 'x', parentKey: 'PROJ-9999' }, /parentKey/],
    ['parent in another project', { kind: 'subtask', title: 'x', parentKey: 'OTH-1' }, /parentKey.*another project/],
    ['assignee not a member', { kind: 'task', title: 'x', assigneeId: 'usr_nobody' }, /assigneeId/],
    ['body not an object', [1, 2], /body|object|array/i],
  ])('%s is 422', async (_name, body, message) => {
    const r = await create(body);
    expect(r.status).toBe(422);
    expect(r.body.code).toBe('INVALID_REQUEST');
    expect(r.body.error).toMatch(message);
  });

  test('an archived parent is refused', async () => {
    const story = await create({ kind: 'story', title: 'to archive' });
    s.admin.archiveItem(story.body.key);
    expect((await create({ kind: 'subtask', title: 'x', parentKey: story.body.key })).status).toBe(422);
  });

  test.each([['missing project', 'NOPE']])('%s is 404', async (_n, key) => {
    const r = await s.call('POST', `/projects/${key}/work-items`, { body: { kind: 'task', title: 'x' } });
    expect(r.status).toBe(404);
  });

  test('a token narrowed to another project gets 404 for this one', async () => {
    const token = s.admin.createToken({ workspaceId: s.workspaceId, userId: s.userId, projectKey: 'OTH' }).token;
    expect((await create({ kind: 'task', title: 'x' }, token)).status).toBe(404);
  });
});

describe('GET /work-items/{key}', () => {
  test('the full detail: ancestors, children, links, readiness', async () => {
    const a = s.admin;
    const epic = a.createWorkItem({ projectKey: P, kind: 'epic', title: 'Epic' }).key;
    const story = a.createWorkItem({ projectKey: P, kind: 'story', title: 'Story', parentKey: epic }).key;
    const sub = a.createWorkItem({ projectKey: P, kind: 'subtask', title: 'Sub', parentKey: story, labels: ['x'], components: ['c'] }).key;
    const sub2 = a.createWorkItem({ projectKey: P, kind: 'subtask', title: 'Sub2', parentKey: story, archived: true }).key;
    const blocker = a.createWorkItem({ projectKey: P, kind: 'task', title: 'Blocker' }).key;
    const doneBlocker = a.createWorkItem({ projectKey: P, kind: 'task', title: 'Done blocker', status: 'done' }).key;
    const rel = a.createWorkItem({ projectKey: P, kind: 'task', title: 'Related' }).key;
    a.addLink(blocker, story, 'blocks');
    a.addLink(doneBlocker, sub, 'blocks');
    a.addLink(sub, rel, 'blocks');
    a.addLink(rel, sub, 'relates');
    a.addLink(sub, blocker, 'duplicates');
    a.addLink(sub, doneBlocker, 'clones');
    a.setFields(sub, {
      deliveries: JSON.stringify([
        { repo: 'acme/web', number: 7, title: 'PR', url: 'https://x/7', state: 'open', ci: 'failing', baseRef: null, defaultBranch: 'main' },
      ]),
    });

    const r = await s.call('GET', `/work-items/${sub}`);
    expect(r.status).toBe(200);
    expect(r.headers.etag).toMatch(/^".+"$/);
    const d = r.body;
    expect(d.parentKey).toBe(story);
    expect(d.ancestorKeys).toEqual([story, epic]);
    expect(d.labels).toEqual([{ name: 'x' }]);
    expect(d.components).toEqual([{ name: 'c' }]);
    expect(d.links.blockedBy.map((l: { key: string }) => l.key)).toEqual([doneBlocker]);
    expect(d.links.blocks.map((l: { key: string }) => l.key)).toEqual([rel]);
    expect(d.links.relatesTo.map((l: { key: string }) => l.key)).toEqual([rel]);
    expect(d.links.duplicates.map((l: { key: string }) => l.key)).toEqual([blocker]);
    expect(d.links.clones.map((l: { key: string }) => l.key)).toEqual([doneBlocker]);
    expect(d.links.blockedBy[0]).toMatchObject({ status: 'done', statusCategory: 'done', kind: 'task', parentKey: null, archived: false });
    // Own blocker done, but the parent story has an open blocker: not ready (cascade).
    expect(d.readiness).toEqual({ ready: false, openBlockers: [], blockedByAncestorKey: story, blockedByAncestorTitle: 'Story' });
    expect(d.deliveries[0]).toMatchObject({ repo: 'acme/web', number: 7, ci: 'failing' });

    const storyDetail = (await s.call('GET', `/work-items/${story}`)).body;
    expect(storyDetail.children.map((c: { key: string; archived: boolean }) => [c.key, c.archived])).toEqual([
      [sub, false],
      [sub2, true],
    ]);
    expect(storyDetail.children[0].dependencies.blockedBy).toEqual([{ key: doneBlocker, title: 'Done blocker', status: 'done' }]);
    expect(storyDetail.readiness.ready).toBe(false);
    expect(storyDetail.readiness.openBlockers.map((b: { key: string }) => b.key)).toEqual([blocker]);

    a.setStatus(blocker, 'done');
    expect((await s.call('GET', `/work-items/${sub}`)).body.readiness).toMatchObject({ ready: true, blockedByAncestorKey: null });
  });

  test.each([
    ['missing', () => 'PROJ-99999'],
    [
      'in a project of another workspace',
      () => {
        const ws = s.admin.createWorkspace({ name: 'Far', slug: 'far' });
        s.admin.createProject({ workspaceId: ws.id, key: 'FAR', name: 'Far' });
        return s.admin.createWorkItem({ projectKey: 'FAR', kind: 'task', title: 'far' }).key;
      },
    ],
    ["outside the token's narrowed project", () => 'OTH-1'],
  ])('an item %s is 404', async (_n, key) => {
    const token = s.admin.createToken({ workspaceId: s.workspaceId, userId: s.userId, projectKey: P }).token;
    const r = await s.call('GET', `/work-items/${key()}`, { token });
    expect(r.status).toBe(404);
    expect(r.body.code).toBe('NOT_FOUND');
  });
});
