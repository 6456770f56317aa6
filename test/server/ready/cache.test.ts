// The ready set is maintained on write (src/server/ready/model.ts, changes.ts). Every kind of
// write that can change readiness must change the next answer at once, whoever makes it: the API,
// the admin API, raw SQL on the service's connection, or another connection to the same file.
import { mkdtempSync, rmSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestService, type TestService } from '../../support/service.js';

let s: TestService;
let dir: string;
const P = 'PROJ';

interface Group {
  container: { key: string } | null;
  items: { key: string; title: string }[];
}
interface Container {
  key: string;
  title: string;
  readyLeafCount: number;
  childCount: number;
  priority: string;
}

async function bugs(qs = ''): Promise<Group[]> {
  const r = await s.call('GET', `/projects/${P}/ready/bugs${qs ? `?${qs}` : ''}`);
  expect(r.status).toBe(200);
  return r.body.items;
}
async function containers(qs = ''): Promise<Container[]> {
  const r = await s.call('GET', `/projects/${P}/ready/containers${qs ? `?${qs}` : ''}`);
  expect(r.status).toBe(200);
  return r.body.items;
}
const bugKeys = async (qs = '') => (await bugs(qs)).flatMap((g) => g.items.map((i) => i.key));
const containerKeys = async (qs = '') => (await containers(qs)).map((c) => c.key);
const make = (x: Omit<Parameters<TestService['admin']['createWorkItem']>[0], 'projectKey'> & { projectKey?: string }) =>
  s.admin.createWorkItem({ projectKey: P, ...x }).key;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-ready-cache-'));
  s = await startTestService({ dbFile: join(dir, 'svc.db') });
});
afterAll(async () => {
  await s.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the ready lanes never answer from a stale cache', () => {
  test('a repeated request gives the same answer (and the cache serves it)', async () => {
    const bug = make({ kind: 'bug', title: 'repeat' });
    const first = await bugs();
    expect(await bugs()).toEqual(first);
    expect(first.flatMap((g) => g.items.map((i) => i.key))).toContain(bug);
  });

  test('a new item (admin API) appears', async () => {
    await bugKeys();
    const bug = make({ kind: 'bug', title: 'new bug' });
    expect(await bugKeys()).toContain(bug);
  });

  test('a new item through the API appears', async () => {
    await bugKeys();
    const r = await s.call('POST', `/projects/${P}/work-items`, { body: { kind: 'bug', title: 'made by the API' } });
    expect(r.status).toBe(201);
    expect(await bugKeys()).toContain(r.body.key);
  });

  test('a status change to done removes an item, and back to todo restores it', async () => {
    const bug = make({ kind: 'bug', title: 'to finish' });
    expect(await bugKeys()).toContain(bug);
    s.admin.setStatus(bug, 'done');
    expect(await bugKeys()).not.toContain(bug);
    s.admin.setStatus(bug, 'todo');
    expect(await bugKeys()).toContain(bug);
  });

  test('a blocks link removes the blocked item; finishing or unlinking the blocker restores it', async () => {
    const blocker = make({ kind: 'task', title: 'blocker' });
    const bug = make({ kind: 'bug', title: 'to block' });
    expect(await bugKeys()).toContain(bug);
    s.admin.addLink(blocker, bug, 'blocks');
    expect(await bugKeys()).not.toContain(bug);
    s.admin.setStatus(blocker, 'done');
    expect(await bugKeys()).toContain(bug);
    s.admin.setStatus(blocker, 'todo');
    expect(await bugKeys()).not.toContain(bug);
    s.admin.removeLink(blocker, bug, 'blocks');
    expect(await bugKeys()).toContain(bug);
  });

  test('a blocker in another project still counts, and its status change is seen', async () => {
    s.admin.createProject({ workspaceId: s.workspaceId, key: 'CROSS', name: 'Cross' });
    const blocker = make({ projectKey: 'CROSS', kind: 'task', title: 'elsewhere' });
    const bug = make({ kind: 'bug', title: 'blocked from elsewhere' });
    s.admin.addLink(blocker, bug, 'blocks');
    expect(await bugKeys()).not.toContain(bug);
    s.admin.setStatus(blocker, 'cancelled');
    expect(await bugKeys()).toContain(bug);
  });

  test('a blocker on an ancestor cascades at once (and allowSoftBlock ignores it)', async () => {
    const story = make({ kind: 'story', title: 'parent' });
    const bug = make({ kind: 'bug', title: 'beneath', parentKey: story });
    const blocker = make({ kind: 'task', title: 'blocks the parent' });
    expect(await bugKeys()).toContain(bug);
    expect(await bugKeys('allowSoftBlock=true')).toContain(bug);
    s.admin.addLink(blocker, story, 'blocks');
    expect(await bugKeys()).not.toContain(bug);
    expect(await bugKeys('allowSoftBlock=true')).toContain(bug);
  });

  test('archiving removes an item; unarchiving restores it', async () => {
    const bug = make({ kind: 'bug', title: 'to archive' });
    expect(await bugKeys()).toContain(bug);
    s.admin.archiveItem(bug);
    expect(await bugKeys()).not.toContain(bug);
    s.admin.archiveItem(bug, false);
    expect(await bugKeys()).toContain(bug);
  });

  test('sprint membership and the active sprint are read afresh', async () => {
    const sprint = s.admin.createSprint({ projectKey: P, name: 'S', state: 'future' });
    const bug = make({ kind: 'bug', title: 'sprinting' });
    expect(await bugKeys(`sprintId=${sprint.id}`)).toEqual([]);
    s.admin.setFields(bug, { sprint_id: sprint.id });
    expect(await bugKeys(`sprintId=${sprint.id}`)).toEqual([bug]);
    expect((await s.call('GET', `/projects/${P}/ready/bugs?sprintId=active`)).status).toBe(422);
    s.admin.setSprintState(sprint.id, 'active');
    expect(await bugKeys('sprintId=active')).toEqual([bug]);
    s.admin.setFields(bug, { sprint_id: null });
    expect(await bugKeys('sprintId=active')).toEqual([]);
  });

  test('an update through the API (PATCH) changes the rows and their order', async () => {
    const bug = make({ kind: 'bug', title: 'before', priority: 'lowest' });
    const before = await bugs();
    expect(before.at(-1)!.items.map((i) => i.key)).toContain(bug);
    const r = await s.call('PATCH', `/work-items/${bug}`, { body: { title: 'after', priority: 'highest' } });
    expect(r.status).toBe(200);
    const after = await bugs();
    expect(after[0]!.items[0]).toMatchObject({ key: bug, title: 'after' });
  });

  test('raw SQL on the service connection is seen', async () => {
    const bug = make({ kind: 'bug', title: 'raw' });
    expect(await bugKeys()).toContain(bug);
    s.db.prepare(`UPDATE work_items SET status = 'done' WHERE key = ?`).run(bug);
    expect(await bugKeys()).not.toContain(bug);
  });

  test('a write from another connection to the same file is seen', async () => {
    const bug = make({ kind: 'bug', title: 'other connection' });
    expect(await bugKeys()).toContain(bug);
    const other = new DatabaseSync(join(dir, 'svc.db'));
    try {
      other.exec('PRAGMA busy_timeout = 5000');
      other.prepare(`UPDATE work_items SET archived_at = '2026-01-01T00:00:00.000Z' WHERE key = ?`).run(bug);
    } finally {
      other.close();
    }
    expect(await bugKeys()).not.toContain(bug);
  });

  test('containers: a new child, a finished child and a changed title are seen at once', async () => {
    const story = make({ kind: 'story', title: 'container', priority: 'highest' });
    const a = make({ kind: 'subtask', title: 'a', parentKey: story });
    let c = (await containers()).find((x) => x.key === story)!;
    expect(c).toMatchObject({ readyLeafCount: 1, childCount: 1, title: 'container' });
    make({ kind: 'subtask', title: 'b', parentKey: story });
    c = (await containers()).find((x) => x.key === story)!;
    expect(c).toMatchObject({ readyLeafCount: 2, childCount: 2 });
    s.admin.setStatus(a, 'done');
    c = (await containers()).find((x) => x.key === story)!;
    expect(c).toMatchObject({ readyLeafCount: 1, childCount: 2 });
    s.admin.setFields(story, { title: 'renamed' });
    expect((await containers()).find((x) => x.key === story)!.title).toBe('renamed');
    // A rendered page is a copy: changing an answer cannot change the next one.
    const page = await containers();
    page[0]!.title = 'mutated';
    expect((await containers())[0]!.title).not.toBe('mutated');
    s.admin.setStatus(story, 'done');
    expect(await containerKeys()).not.toContain(story);
  });

  test('after 1,000 writes a lane request refreshes SQLite statistics, and answers the same', async () => {
    const stats = () => (s.db.prepare(`SELECT COUNT(*) AS n FROM sqlite_master WHERE name = 'sqlite_stat1'`).get() as { n: number }).n;
    const bug = make({ kind: 'bug', title: 'statistics' });
    const before = await bugKeys();
    expect(before).toContain(bug);
    for (let i = 0; i < 1000; i++) s.admin.setFields(bug, { title: `statistics ${i % 2}` });
    expect(await bugKeys()).toEqual(before);
    expect(stats()).toBe(1);
  });

  test('a write inside a transaction that rolls back leaves no stale answer behind', async () => {
    const bug = make({ kind: 'bug', title: 'rolled back' });
    expect(await bugKeys()).toContain(bug);
    s.db.exec('BEGIN IMMEDIATE');
    s.db.prepare(`UPDATE work_items SET status = 'done' WHERE key = ?`).run(bug);
    expect(await bugKeys()).not.toContain(bug);
    s.db.exec('ROLLBACK');
    expect(await bugKeys()).toContain(bug);
    s.admin.setStatus(bug, 'in_progress');
    expect(await bugKeys()).toContain(bug);
  });
});
