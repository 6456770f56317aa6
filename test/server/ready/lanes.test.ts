// listReadyBugs, listReadyContainers: the ready bug lane (groups) and the runnable containers, with every
// parameter and every 422 rule of api-v1.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestService, type TestService } from '../../support/service.js';

let s: TestService;
const P = 'PROJ';
const k: Record<string, string> = {};
let sprintId: string;
let otherSprint: string;

// E epic
//   S1 story (high): a, b (blocked by a), c                → container, readyLeafCount 2
//   S2 story (highest) blocked by X: d                      → cascade: nothing ready
//   S3 story: BUG1 bug (cascade-blocked through S3's X2 blocker)
// S4 story: e subtask, BUG4 bug with f subtask            → not a container (a child has children)
// T task (low): no children                                → a leaf of the leaves lane, not a container
// BUG2 bug (medium, childless, in sprint)                  → its own group
// BUG3 bug (highest): s1 (assigned), s2 (done)             → group under BUG3 with s1
// X, X2 tasks (open blockers)
beforeAll(async () => {
  s = await startTestService();
  const a = s.admin;
  sprintId = a.createSprint({ projectKey: P, name: 'Now', state: 'active' }).id;
  s.admin.createProject({ workspaceId: s.workspaceId, key: 'OTH', name: 'Other' });
  otherSprint = a.createSprint({ projectKey: 'OTH', name: 'Theirs' }).id;
  a.createWorkItem({ projectKey: 'OTH', kind: 'story', title: 'theirs' });
  const w = (name: string, x: Omit<Parameters<typeof a.createWorkItem>[0], 'projectKey'>) => {
    k[name] = a.createWorkItem({ projectKey: P, ...x }).key;
  };
  w('X', { kind: 'task', title: 'X blocker', priority: 'lowest' });
  w('X2', { kind: 'task', title: 'X2 blocker', priority: 'lowest' });
  w('E', { kind: 'epic', title: 'E' });
  w('S1', { kind: 'story', title: 'S1', parentKey: k.E, priority: 'high', sprintId });
  w('a', { kind: 'subtask', title: 'a', parentKey: k.S1 });
  w('b', { kind: 'subtask', title: 'b', parentKey: k.S1, blockedBy: [k.a!] });
  w('c', { kind: 'subtask', title: 'c', parentKey: k.S1 });
  w('S2', { kind: 'story', title: 'S2', parentKey: k.E, priority: 'highest', blockedBy: [k.X!] });
  w('d', { kind: 'subtask', title: 'd', parentKey: k.S2 });
  w('S3', { kind: 'story', title: 'S3', parentKey: k.E, blockedBy: [k.X2!] });
  w('BUG1', { kind: 'bug', title: 'BUG1', parentKey: k.S3 });
  w('S4', { kind: 'story', title: 'S4' });
  w('e', { kind: 'subtask', title: 'e', parentKey: k.S4 });
  w('BUG4', { kind: 'bug', title: 'BUG4', parentKey: k.S4, priority: 'low' });
  w('f', { kind: 'subtask', title: 'f', parentKey: k.BUG4 });
  w('T', { kind: 'task', title: 'T', priority: 'low' });
  w('BUG2', { kind: 'bug', title: 'BUG2', sprintId, type: 'code' });
  w('BUG3', { kind: 'bug', title: 'BUG3', priority: 'highest' });
  w('s1', { kind: 'subtask', title: 's1', parentKey: k.BUG3, assigneeId: s.userId, priority: 'high' });
  w('s2', { kind: 'subtask', title: 's2', parentKey: k.BUG3, status: 'done' });
});
afterAll(() => s.close());

interface Group {
  container: { key: string } | null;
  items: { key: string }[];
}
const bugs = async (qs = '') => s.call('GET', `/projects/${P}/ready/bugs${qs ? `?${qs}` : ''}`);
const containers = async (qs = '') => s.call('GET', `/projects/${P}/ready/containers${qs ? `?${qs}` : ''}`);
const shape = (body: { items: Group[] }) => body.items.map((g) => [g.container?.key ?? null, g.items.map((i) => i.key)]);

describe('GET ready/bugs', () => {
  test('a ready bug is its own group; ready subtasks of a bug are grouped under it; priority order', async () => {
    const r = await bugs();
    expect(r.status).toBe(200);
    expect(shape(r.body)).toEqual([
      [k.BUG3, [k.s1]],
      [null, [k.BUG2]],
      [k.BUG4, [k.f]],
    ]);
    expect(r.body.items[0].container).toMatchObject({ key: k.BUG3, kind: 'bug', statusCategory: 'todo', archived: false });
    expect(r.body.items[1].items[0]).toMatchObject({ key: k.BUG2, kind: 'bug', dependencies: { blockedBy: [], blocks: [] } });
  });

  test('with the leaves lane it holds the whole ready set, disjointly', async () => {
    const all = await s.call('GET', `/projects/${P}/work-items?limit=100&filter=${encodeURIComponent('ready:true leaf:true')}`);
    const leaves = await s.call('GET', `/projects/${P}/work-items?limit=100&filter=${encodeURIComponent('ready:true leaf:true bugwork:false')}`);
    const bugKeys = (await bugs('limit=100')).body.items.flatMap((g: Group) => g.items.map((i) => i.key));
    const leafKeys = leaves.body.items.map((i: { key: string }) => i.key);
    expect(leafKeys.filter((x: string) => bugKeys.includes(x))).toEqual([]);
    expect([...leafKeys, ...bugKeys].sort()).toEqual(all.body.items.map((i: { key: string }) => i.key).sort());
  });

  test("allowSoftBlock=true drops the parent-ready cascade, not the leaf's own blockers", async () => {
    expect(shape((await bugs('allowSoftBlock=true')).body)).toEqual([
      [k.BUG3, [k.s1]],
      [null, [k.BUG1]],
      [null, [k.BUG2]],
      [k.BUG4, [k.f]],
    ]);
    expect(shape((await bugs('allowSoftBlock=false')).body)).toEqual(shape((await bugs()).body));
    expect(shape((await bugs('allowSoftBlock=')).body)).toEqual(shape((await bugs()).body));
  });

  test.each([
    ['kind=bug', () => [[null, [k.BUG2]]]],
    [
      'kind=subtask&kind=bug',
      () => [
        [k.BUG3, [k.s1]],
        [null, [k.BUG2]],
        [k.BUG4, [k.f]],
      ],
    ],
    ['priority=high', () => [[k.BUG3, [k.s1]]]],
    [
      'priority=medium&priority=high',
      () => [
        [k.BUG3, [k.s1]],
        [null, [k.BUG2]],
        [k.BUG4, [k.f]],
      ],
    ],
    [
      'assigneeId=none',
      () => [
        [null, [k.BUG2]],
        [k.BUG4, [k.f]],
      ],
    ],
    ['assigneeId=USER', () => [[k.BUG3, [k.s1]]]],
    [
      'assigneeId=',
      () => [
        [k.BUG3, [k.s1]],
        [null, [k.BUG2]],
        [k.BUG4, [k.f]],
      ],
    ],
    ['ancestor=BUG3', () => [[k.BUG3, [k.s1]]]],
    ['ancestor=S4', () => [[k.BUG4, [k.f]]]],
    [
      'ancestor=BUG3&ancestor=S4',
      () => [
        [k.BUG3, [k.s1]],
        [k.BUG4, [k.f]],
      ],
    ],
    ['ancestor=BUG2', () => []],
    ['sprintId=active', () => [[null, [k.BUG2]]]],
    ['sprintId=SPRINT', () => [[null, [k.BUG2]]]],
    [
      'sprintId=',
      () => [
        [k.BUG3, [k.s1]],
        [null, [k.BUG2]],
        [k.BUG4, [k.f]],
      ],
    ],
  ])('%s narrows the rows', async (qs, expected) => {
    const query = qs
      .replace('USER', s.userId)
      .replace('SPRINT', sprintId)
      .replace(/ancestor=([A-Za-z0-9]+)/g, (_m, name: string) => `ancestor=${k[name]}`);
    const r = await bugs(query);
    expect(r.status).toBe(200);
    expect(shape(r.body)).toEqual(expected());
  });

  test('pages groups with a cursor scoped to the parameters', async () => {
    const first = await bugs('limit=2');
    expect(first.body.items).toHaveLength(2);
    const second = await bugs(`limit=2&cursor=${encodeURIComponent(first.body.nextCursor)}`);
    expect(shape(second.body)).toEqual([[k.BUG4, [k.f]]]);
    expect(second.body.nextCursor).toBeNull();
    expect((await bugs(`limit=2&priority=low&cursor=${encodeURIComponent(first.body.nextCursor)}`)).status).toBe(422);
    expect((await containers(`cursor=${encodeURIComponent(first.body.nextCursor)}`)).status).toBe(422);
  });
});

describe('GET ready/containers', () => {
  test('runnable stories and tasks with readyLeafCount and childCount; never an epic or bug work', async () => {
    const r = await containers();
    expect(r.status).toBe(200);
    expect(r.body.items).toEqual([
      expect.objectContaining({ key: k.S1, kind: 'story', priority: 'high', readyLeafCount: 2, childCount: 3, statusCategory: 'todo' }),
    ]);
  });

  test('a container whose last ready leaf finishes drops out; a new ready child brings it back', async () => {
    s.admin.setStatus(k.a!, 'done');
    s.admin.setStatus(k.c!, 'done');
    // b is now unblocked: still one ready leaf.
    expect((await containers()).body.items.map((c: { readyLeafCount: number }) => c.readyLeafCount)).toEqual([1]);
    s.admin.setStatus(k.b!, 'done');
    expect((await containers()).body.items).toEqual([]);
    s.admin.setStatus(k.a!, 'todo');
    s.admin.setStatus(k.b!, 'todo');
    s.admin.setStatus(k.c!, 'todo');
  });

  test.each([
    ['priority=high', ['S1']],
    ['priority=low', []],
    ['sprintId=active', ['S1']],
    ['assigneeId=none', ['S1']],
    ['assigneeId=usr_someone', []],
  ])('%s filters on the container itself', async (qs, expected) => {
    const r = await containers(qs);
    expect(r.status).toBe(200);
    expect(r.body.items.map((c: { key: string }) => c.key)).toEqual(expected.map((name) => k[name]));
  });
});

describe('422 rules', () => {
  test.each([
    ['unknown kind', 'kind=saga', /kind/],
    ['unknown priority', 'priority=urgent', /priority/],
    ['malformed ancestor', 'ancestor=nope', /ancestor/],
    ['missing ancestor', 'ancestor=PROJ-9999', /ancestor/],
    ['ancestor of another project', 'ancestor=OTH-1', /ancestor/],
    ['unknown sprint', 'sprintId=spr_nope', /sprintId/],
    ['sprint of another project', 'sprintId=OTHER', /sprintId/],
    ['bad allowSoftBlock', 'allowSoftBlock=yes', /allowSoftBlock/],
    ['allowSoftBlock=TRUE', 'allowSoftBlock=TRUE', /allowSoftBlock/],
    ['limit 0', 'limit=0', /limit/],
    ['bad cursor', 'cursor=abc', /cursor/],
  ])('ready/bugs: %s', async (_n, qs, message) => {
    const r = await bugs(qs.replace('OTHER', otherSprint));
    expect(r.status).toBe(422);
    expect(r.body.code).toBe('INVALID_REQUEST');
    expect(r.body.error).toMatch(message);
  });

  test.each([
    ['kind', 'kind=story', /kind/],
    ['ancestor', 'ancestor=PROJ-1', /ancestor/],
    ['allowSoftBlock', 'allowSoftBlock=false', /allowSoftBlock/],
    ['unknown priority', 'priority=urgent', /priority/],
    ['sprint of another project', 'sprintId=OTHER', /sprintId/],
    ['limit -1', 'limit=-1', /limit/],
  ])('ready/containers: %s', async (_n, qs, message) => {
    const r = await containers(qs.replace('OTHER', otherSprint));
    expect(r.status).toBe(422);
    expect(r.body.error).toMatch(message);
  });

  test('sprintId=active between sprints is 422 on both lanes', async () => {
    s.admin.setSprintState(sprintId, 'closed');
    try {
      expect((await bugs('sprintId=active')).status).toBe(422);
      expect((await containers('sprintId=active')).status).toBe(422);
    } finally {
      s.admin.setSprintState(sprintId, 'active');
    }
  });

  test.each([['bugs'], ['containers']])('ready/%s of a project outside the token is 404', async (lane) => {
    const token = s.admin.createToken({ workspaceId: s.workspaceId, userId: s.userId, projectKey: 'OTH' }).token;
    expect((await s.call('GET', `/projects/${P}/ready/${lane}`, { token })).status).toBe(404);
    expect((await s.call('GET', `/projects/NOPE/ready/${lane}`)).status).toBe(404);
  });
});
