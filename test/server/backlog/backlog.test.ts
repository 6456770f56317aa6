// listBacklog (the ranked backlog) and 11 (move items out of their sprint) against the real local
// service, plus the sprint reference helper the ready lanes may share.
import { describe, expect, test } from 'vitest';
import { resolveSprint } from '../../../src/server/backlog/sprints.js';
import { ServiceError } from '../../../src/server/kernel.js';
import type { TestService } from '../../support/service.js';
import { tokenWith } from '../support/http.js';
import { useProjectService } from '../support/project-service.js';

const { svc, call, project } = useProjectService('B', 'Backlog');

const item = (key: string, title: string, more: Partial<Parameters<TestService['admin']['createWorkItem']>[0]> = {}) =>
  svc.admin.createWorkItem({ projectKey: key, kind: 'task', title, ...more }).key;

const keysOf = (body: { items: { key: string }[] }) => body.items.map((i) => i.key);
const sprintOf = (key: string) => svc.admin.workItem(key).sprint_id;

describe('GET /projects/{projectKey}/backlog (listBacklog)', () => {
  test('rank order, unranked items after ranked ones by age; done, sprint and archived items left out', async () => {
    const key = project();
    const sprint = svc.admin.createSprint({ projectKey: key, name: 'S1', state: 'active' });
    const closed = svc.admin.createSprint({ projectKey: key, name: 'S0', state: 'closed' });
    const unrankedOld = item(key, 'unranked old');
    const second = item(key, 'ranked second');
    const first = item(key, 'ranked first');
    const unrankedNew = item(key, 'unranked new');
    svc.admin.setFields(second, { rank: 'm' });
    svc.admin.setFields(first, { rank: 'c' });
    item(key, 'done', { status: 'done' });
    item(key, 'cancelled', { status: 'cancelled' });
    item(key, 'archived', { archived: true });
    item(key, 'in the sprint', { sprintId: sprint.id });
    const leftOver = item(key, 'left over from a closed sprint', { sprintId: closed.id });
    const review = item(key, 'in review', { status: 'in_review' });

    const res = await call('GET', `/projects/${key}/backlog`);
    expect(res.status).toBe(200);
    expect(keysOf(res.body)).toEqual([first, second, unrankedOld, unrankedNew, leftOver, review]);
    expect(res.body.total).toBe(6);
    expect(res.body.nextCursor).toBeNull();
    expect(res.body.items[0]).toMatchObject({ key: first, title: 'ranked first', statusCategory: 'todo' });
  });

  test('pages keep the total of the whole backlog; cursors are scoped to the filter', async () => {
    const key = project();
    const keys = [1, 2, 3, 4, 5].map((i) => item(key, `item ${i}`));
    const first = await call('GET', `/projects/${key}/backlog?limit=2`);
    expect([keysOf(first.body), first.body.total]).toEqual([keys.slice(0, 2), 5]);
    const second = await call('GET', `/projects/${key}/backlog?limit=2&cursor=${first.body.nextCursor}`);
    expect([keysOf(second.body), second.body.total]).toEqual([keys.slice(2, 4), 5]);
    const filtered = await call('GET', `/projects/${key}/backlog?limit=2&filter=kind:task&cursor=${first.body.nextCursor}`);
    expect([filtered.status, filtered.body.code]).toEqual([422, 'INVALID_REQUEST']);
  });

  test('filter narrows the backlog in operation 5 grammar, and the total with it', async () => {
    const key = project();
    const bug = item(key, 'a bug', { kind: 'bug', priority: 'high' });
    item(key, 'a task');
    const res = await call('GET', `/projects/${key}/backlog?filter=${encodeURIComponent('kind:bug priority:high')}`);
    expect([res.status, keysOf(res.body), res.body.total]).toEqual([200, [bug], 1]);
  });

  test.each([
    ['an unknown filter field', 'filter=colour:red'],
    ['an unknown filter value', 'filter=kind:saga'],
    ['an empty filter', 'filter='],
    ['limit=0', 'limit=0'],
    ['a negative limit', 'limit=-1'],
    ['a forged cursor', 'cursor=abc.def'],
  ])('%s is 422 INVALID_REQUEST', async (_why, query) => {
    const res = await call('GET', `/projects/${project()}/backlog?${query}`);
    expect([res.status, res.body.code]).toEqual([422, 'INVALID_REQUEST']);
  });

  test('a limit above 100 is clamped', async () => {
    const key = project();
    for (let i = 0; i < 102; i++) item(key, `bulk ${i}`);
    const res = await call('GET', `/projects/${key}/backlog?limit=500`);
    expect([res.body.items.length, res.body.total]).toEqual([100, 102]);
    expect(res.body.nextCursor).not.toBeNull();
  });
});

describe('POST /projects/{projectKey}/backlog/work-items (moveToBacklog)', () => {
  test('moves items out of their sprint, reporting keys in request order', async () => {
    const key = project();
    const sprint = svc.admin.createSprint({ projectKey: key, name: 'S', state: 'active' });
    const a = item(key, 'a', { sprintId: sprint.id });
    const b = item(key, 'b', { sprintId: sprint.id });
    const c = item(key, 'c', { sprintId: sprint.id });
    const versionBefore = svc.admin.workItem(b).version;
    const res = await call('POST', `/projects/${key}/backlog/work-items`, { workItemKeys: [c, a, c] });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ movedKeys: [c, a] });
    expect([sprintOf(a), sprintOf(b), sprintOf(c)]).toEqual([null, sprint.id, null]);
    expect(svc.admin.workItem(b).version).toBe(versionBefore);
    const detail = await call('GET', `/work-items/${a}`);
    expect(detail.body.sprintId).toBeNull();
    expect(keysOf((await call('GET', `/projects/${key}/backlog`)).body)).toEqual([a, c]);
  });

  test('an item already in the backlog is reported and left untouched', async () => {
    const key = project();
    const a = item(key, 'already there');
    const version = svc.admin.workItem(a).version;
    const res = await call('POST', `/projects/${key}/backlog/work-items`, { workItemKeys: [a] });
    expect([res.status, res.body.movedKeys]).toEqual([200, [a]]);
    expect(svc.admin.workItem(a).version).toBe(version);
  });

  test('an empty array is a 200 no-op', async () => {
    const res = await call('POST', `/projects/${project()}/backlog/work-items`, { workItemKeys: [] });
    expect([res.status, res.body]).toEqual([200, { movedKeys: [] }]);
  });

  test.each([
    ['an unknown key', (key: string) => `${key}-999`],
    ['a key of another project', () => item(project(), 'elsewhere')],
  ])('a batch holding %s is 422 and moves nothing', async (_why, stranger) => {
    const key = project();
    const sprint = svc.admin.createSprint({ projectKey: key, name: 'S', state: 'active' });
    const a = item(key, 'a', { sprintId: sprint.id });
    const res = await call('POST', `/projects/${key}/backlog/work-items`, { workItemKeys: [a, stranger(key)] });
    expect([res.status, res.body.code]).toEqual([422, 'INVALID_REQUEST']);
    expect(sprintOf(a)).toBe(sprint.id);
  });

  test('a batch over the cap of 100 is refused whole (422)', async () => {
    const key = project();
    const sprint = svc.admin.createSprint({ projectKey: key, name: 'S', state: 'active' });
    const a = item(key, 'a', { sprintId: sprint.id });
    const keys = [a, ...Array.from({ length: 100 }, () => a)];
    const res = await call('POST', `/projects/${key}/backlog/work-items`, { workItemKeys: keys });
    expect([res.status, res.body.code]).toEqual([422, 'INVALID_REQUEST']);
    expect(sprintOf(a)).toBe(sprint.id);
  });

  test.each([
    ['a malformed key', { workItemKeys: ['not a key'] }],
    ['a missing workItemKeys', {}],
    ['an unknown property', { workItemKeys: [], sprintId: 'x' }],
  ])('%s is 422 INVALID_REQUEST', async (_why, body) => {
    const res = await call('POST', `/projects/${project()}/backlog/work-items`, body);
    expect([res.status, res.body.code]).toEqual([422, 'INVALID_REQUEST']);
  });
});

describe('authentication, permissions and the project of ops 10–11', () => {
  const ops = (key: string) =>
    [
      ['GET', `/projects/${key}/backlog`, undefined, 'project:browse'],
      ['POST', `/projects/${key}/backlog/work-items`, { workItemKeys: [] }, 'sprint:manage'],
    ] as const;

  test.each(ops('PROJ'))('%s %s: 401 without a valid token', async (method, path, body) => {
    for (const token of [null, 'svc_pat_notarealtokennotarealtoken00']) {
      const res = await call(method, path, body, token);
      expect([res.status, res.body.code]).toEqual([401, 'UNAUTHORIZED']);
    }
  });

  test.each(ops('PROJ'))('%s %s: 403 without its permission', async (method, path, body, needed) => {
    const others = ['project:browse', 'work_item:edit', 'sprint:manage', 'ai:plan'].filter((s) => s !== needed);
    const res = await call(method, path, body, tokenWith(svc, others));
    expect([res.status, res.body.code]).toEqual([403, 'FORBIDDEN']);
  });

  test.each(ops('NOPE'))('%s %s: 404 for an unknown project', async (method, path, body) => {
    const res = await call(method, path, body);
    expect([res.status, res.body.code]).toEqual([404, 'NOT_FOUND']);
  });

  test.each(ops('PROJ'))('%s %s: 404 for a project outside a narrowed token', async (method, path, body) => {
    const other = project();
    const res = await call(method, path, body, tokenWith(svc, ['project:browse', 'sprint:manage'], other));
    expect([res.status, res.body.code]).toEqual([404, 'NOT_FOUND']);
  });
});

describe('resolveSprint (sprintId of the ready lanes)', () => {
  test.each([
    ['absent', undefined, null],
    ['empty (means omitted)', '', null],
    ['active', 'active', 'current'],
    ['a sprint id of the project', 'future', 'future'],
  ])('%s resolves', (_why, value, expected) => {
    const key = project();
    const projectId = svc.admin.projectId(key);
    const ids: Record<string, string> = {
      current: svc.admin.createSprint({ projectKey: key, name: 'now', state: 'active' }).id,
      future: svc.admin.createSprint({ projectKey: key, name: 'later' }).id,
    };
    const given = value === 'future' ? ids.future : value;
    expect(resolveSprint(svc.db, projectId, given)).toBe(expected === null ? null : ids[expected]);
  });

  test.each([
    ['active between sprints', () => 'active'],
    ['a sprint of another project', () => svc.admin.createSprint({ projectKey: project(), name: 'theirs', state: 'active' }).id],
    ['an unknown id', () => 'spr_nope'],
  ])('%s is 422 INVALID_REQUEST', (_why, value) => {
    const key = project();
    svc.admin.createSprint({ projectKey: key, name: 'done', state: 'closed' });
    const attempt = () => resolveSprint(svc.db, svc.admin.projectId(key), value());
    expect(attempt).toThrow(ServiceError);
    try {
      attempt();
    } catch (err) {
      expect([(err as ServiceError).status, (err as ServiceError).code]).toEqual([422, 'INVALID_REQUEST']);
    }
  });
});
