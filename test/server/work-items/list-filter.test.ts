// listWorkItems, countWorkItems: the filtered listing, its order and paging, and a count that always equals
// what the listing pages. Every clause of the grammar (docs/service.md) is exercised, and every
// kind of 422 it names.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestService, type TestService } from '../../support/service.js';

let s: TestService;
let sprintId: string;
let otherUser: string;
const P = 'PROJ';

// PROJ-1 epic E (high, label web)
//   PROJ-2 story S (sprint, assignee, 5 points) — blocked by PROJ-9 (open)
//     PROJ-3 subtask S1 (not ready: cascade)
//   PROJ-4 task T (done)
// PROJ-5 bug B (highest)
//   PROJ-6 subtask B1 (estimate 30, due 2030-06-01)
// PROJ-7 task Lone (human, label api)
// PROJ-8 task Archived (archived)
// PROJ-9 task Blocker ("Quoted, title")
beforeAll(async () => {
  s = await startTestService();
  sprintId = s.admin.createSprint({ projectKey: P, name: 'S1', state: 'active' }).id;
  otherUser = s.admin.createUser({ name: 'Other', email: 'other@test.example' }).id;
  s.admin.addMember(s.workspaceId, otherUser);
  const w = (x: Omit<Parameters<typeof s.admin.createWorkItem>[0], 'projectKey'>) => s.admin.createWorkItem({ projectKey: P, ...x }).key;
  w({ kind: 'epic', title: 'E', priority: 'high', labels: ['Web'] });
  w({ kind: 'story', title: 'S', parentKey: 'PROJ-1', sprintId, assigneeId: otherUser, storyPoints: 5, type: 'code' });
  w({ kind: 'subtask', title: 'S1', parentKey: 'PROJ-2', components: ['api'] });
  w({ kind: 'task', title: 'T', parentKey: 'PROJ-1', status: 'done' });
  w({ kind: 'bug', title: 'B', priority: 'highest' });
  w({ kind: 'subtask', title: 'B1', parentKey: 'PROJ-5', estimateMinutes: 30, dueDate: '2030-06-01T00:00:00.000Z', status: 'in_review' });
  w({ kind: 'task', title: 'Lone', executor: 'human', labels: ['api'] });
  w({ kind: 'task', title: 'Archived', archived: true });
  w({ kind: 'task', title: 'Quoted, title' });
  s.admin.addLink('PROJ-9', 'PROJ-2', 'blocks');
  // Enough items to page.
  for (let i = 0; i < 7; i++) w({ kind: 'task', title: `Filler ${i}`, priority: 'low' });
});
afterAll(() => s.close());

const keys = (body: { items: { key: string }[] }) => body.items.map((i) => i.key);
const list = async (filter?: string, extra = '') =>
  s.call('GET', `/projects/${P}/work-items?limit=100${filter === undefined ? '' : `&filter=${encodeURIComponent(filter)}`}${extra}`);
const count = async (filter?: string) => s.call('GET', `/projects/${P}/work-items/count${filter === undefined ? '' : `?filter=${encodeURIComponent(filter)}`}`);
const fillers = ['PROJ-10', 'PROJ-11', 'PROJ-12', 'PROJ-13', 'PROJ-14', 'PROJ-15', 'PROJ-16'];

describe('listing', () => {
  test('pages every live item in (createdAt, id) order; count matches', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const r = await s.call('GET', `/projects/${P}/work-items?limit=4${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(r.status).toBe(200);
      seen.push(...keys(r.body));
      cursor = r.body.nextCursor;
    } while (cursor);
    const expected = ['PROJ-1', 'PROJ-2', 'PROJ-3', 'PROJ-4', 'PROJ-5', 'PROJ-6', 'PROJ-7', 'PROJ-9', ...fillers];
    expect(seen).toEqual(expected);
    expect((await count()).body).toEqual({ count: expected.length });
  });

  test('the default page is 50 and summaries carry dependencies and statusCategory', async () => {
    const r = await s.call('GET', `/projects/${P}/work-items`);
    const story = r.body.items.find((i: { key: string }) => i.key === 'PROJ-2');
    expect(story).toMatchObject({
      kind: 'story',
      type: 'code',
      status: 'todo',
      statusCategory: 'todo',
      assigneeId: otherUser,
      storyPoints: 5,
      dependencies: { blockedBy: [{ key: 'PROJ-9', title: 'Quoted, title', status: 'todo' }], blocks: [] },
    });
    expect(r.body.items.find((i: { key: string }) => i.key === 'PROJ-9').dependencies.blocks).toEqual([{ key: 'PROJ-2', title: 'S', status: 'todo' }]);
  });

  test('a cursor is scoped to its filter', async () => {
    const first = await s.call('GET', `/projects/${P}/work-items?limit=1&filter=kind:task`);
    const r = await s.call('GET', `/projects/${P}/work-items?limit=1&filter=kind:bug&cursor=${encodeURIComponent(first.body.nextCursor)}`);
    expect(r.status).toBe(422);
  });

  test.each([
    ['missing project', 'NOPE'],
    ['project in another workspace', 'FOR'],
  ])('%s is 404 for list and count', async (_n, key) => {
    const ws = s.admin.createWorkspace({ name: `W ${key}`, slug: `w-${key.toLowerCase()}` });
    if (key === 'FOR') s.admin.createProject({ workspaceId: ws.id, key, name: 'x' });
    expect((await s.call('GET', `/projects/${key}/work-items`)).status).toBe(404);
    expect((await s.call('GET', `/projects/${key}/work-items/count`)).status).toBe(404);
  });
});

describe('filter semantics (count always equals the listing)', () => {
  const cases: [string, string[]][] = [
    ['kind:epic', ['PROJ-1']],
    ['kind:story,bug', ['PROJ-2', 'PROJ-5']],
    ['-kind:task', ['PROJ-1', 'PROJ-2', 'PROJ-3', 'PROJ-5', 'PROJ-6']],
    ['key:PROJ-3,PROJ-7', ['PROJ-3', 'PROJ-7']],
    ['type:code', ['PROJ-2']],
    ['status:in_review', ['PROJ-6']],
    ['statusCategory:done', ['PROJ-4']],
    ['statusCategory:in_progress', ['PROJ-6']],
    ['priority:highest,high', ['PROJ-1', 'PROJ-5']],
    ['executor:human', ['PROJ-7']],
    ['parent:PROJ-1', ['PROJ-2', 'PROJ-4']],
    ['ancestor:PROJ-1', ['PROJ-2', 'PROJ-3', 'PROJ-4']],
    ['label:web', ['PROJ-1']],
    ['label:api,web', ['PROJ-1', 'PROJ-7']],
    ['component:api', ['PROJ-3']],
    ['title~lone', ['PROJ-7']],
    ['title~"quoted, t"', ['PROJ-9']],
    ['title:"QUOTED, TITLE"', ['PROJ-9']],
    ['storyPoints>=5', ['PROJ-2']],
    ['storyPoints:5', ['PROJ-2']],
    ['estimateMinutes<31', ['PROJ-6']],
    ['dueDate>2030-01-01', ['PROJ-6']],
    ['dueDate<2030-01-01', []],
    ['archived:true', ['PROJ-8']],
    ['ready:true leaf:true bugwork:false priority:medium', ['PROJ-7', 'PROJ-9']],
    ['ready:true bugwork:true', ['PROJ-5', 'PROJ-6']],
    ['ready:false -statusCategory:done', ['PROJ-2', 'PROJ-3']],
    ['leaf:false', ['PROJ-1', 'PROJ-2', 'PROJ-5']],
    ['bugwork:true', ['PROJ-5', 'PROJ-6']],
    ['kind:task -label:api priority:medium', ['PROJ-4', 'PROJ-9']],
    ['createdAt>2000-01-01 kind:bug', ['PROJ-5']],
    ['updatedAt<2000-01-01', []],
  ];
  test.each(cases)('%s', async (filter, expected) => {
    const r = await list(filter);
    expect(r.status).toBe(200);
    expect(keys(r.body)).toEqual(expected);
    expect((await count(filter)).body).toEqual({ count: expected.length });
  });

  test.each([
    ['assignee', () => `assignee:${otherUser}`, ['PROJ-2']],
    ['assignee none', () => 'assignee:none kind:story', []],
    ['negated assignee keeps unassigned items', () => `-assignee:${otherUser} kind:story,epic`, ['PROJ-1']],
    ['sprint id', () => `sprint:${sprintId}`, ['PROJ-2']],
    ['active sprint', () => 'sprint:active', ['PROJ-2']],
    ['archived:any', () => 'archived:any title~archived', ['PROJ-8']],
    ['parent:none', () => 'parent:none kind:bug,epic', ['PROJ-1', 'PROJ-5']],
    ['dueDate:none', () => 'dueDate:none kind:subtask', ['PROJ-3']],
  ])('%s', async (_name, filter, expected) => {
    const r = await list(filter());
    expect(keys(r.body)).toEqual(expected);
    expect((await count(filter())).body.count).toBe(expected.length);
  });

  test('assignee:me is the token owner', async () => {
    const token = s.admin.createToken({ workspaceId: s.workspaceId, userId: otherUser }).token;
    const r = await s.call('GET', `/projects/${P}/work-items?filter=assignee:me`, { token });
    expect(keys(r.body)).toEqual(['PROJ-2']);
  });
});

describe('filter errors are 422 naming what is wrong', () => {
  test.each([
    ['unknown field', 'colour:red', /unknown filter field 'colour'/],
    ['unknown field without operator', 'colour', /unknown filter field 'colour'/],
    ['no operator', 'kind', /has no operator/],
    ['operator the field does not take', 'kind>story', /operator '>' is not supported by filter field 'kind'/],
    ['~ on a number', 'storyPoints~3', /operator '~'/],
    ['unknown kind', 'kind:saga', /unknown value 'saga' for filter field 'kind'/],
    ['unknown status', 'status:blocked', /unknown value 'blocked' for filter field 'status'/],
    ['unknown priority', 'priority:urgent', /unknown value 'urgent'/],
    ['bad boolean', 'ready:yes', /unknown value 'yes' for filter field 'ready'/],
    ['bad archived', 'archived:maybe', /unknown value 'maybe' for filter field 'archived'/],
    ['bad number', 'storyPoints>lots', /unknown value 'lots' for filter field 'storyPoints'/],
    ['fractional estimate', 'estimateMinutes:1.5', /unknown value '1.5'/],
    ['bad date', 'createdAt>yesterday', /unknown value 'yesterday' for filter field 'createdAt'/],
    ['date equality', 'createdAt:2020-01-01', /createdAt/],
    ['malformed key', 'key:abc', /unknown value 'abc' for filter field 'key'/],
    ['ancestor not in project', 'ancestor:PROJ-999', /PROJ-999/],
    ['parent not in project', 'parent:OTHER-1', /OTHER-1/],
    ['empty value', 'kind:', /empty value/],
    ['unterminated quote', 'title~"abc', /unterminated quote/],
    ['two values on a boolean', 'leaf:true,false', /one value/],
  ])('%s', async (_name, filter, message) => {
    for (const r of [await list(filter), await count(filter)]) {
      expect(r.status).toBe(422);
      expect(r.body.code).toBe('INVALID_REQUEST');
      expect(r.body.error).toMatch(message);
    }
  });

  test('an empty filter parameter is 422 (minimum length 1)', async () => {
    expect((await s.call('GET', `/projects/${P}/work-items?filter=`)).status).toBe(422);
    expect((await s.call('GET', `/projects/${P}/work-items/count?filter=`)).status).toBe(422);
  });

  test.each([['limit=0'], ['limit=-1'], ['limit=x'], ['cursor=zzz']])('paging %s is 422', async (qs) => {
    expect((await s.call('GET', `/projects/${P}/work-items?${qs}`)).status).toBe(422);
  });
});
