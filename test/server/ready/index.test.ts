// The ready set maintained on write (src/server/ready/model.ts) against the SQL it replaced
// (lanes.ts, which still answers inside a transaction): over a random backlog and a long run of
// random writes of every kind (new items, status, archive, parent moves, kind changes, blocks links
// added and removed, priority, assignee, sprint; admin API, API and raw SQL), the lanes' answers
// over HTTP must equal the SQL's after every write, for each lane and several parameter sets.
import { describe, expect, test } from 'vitest';
import { readLaneParams } from '../../../src/server/ready/params.js';
import { readyBugGroups, readyContainers, renderBugGroups } from '../../../src/server/ready/lanes.js';
import { serviceForFile } from '../../support/service.js';

const s = serviceForFile();
const P = 'PROJ';
const KINDS = ['epic', 'story', 'task', 'bug', 'subtask'] as const;
const STATUSES = ['todo', 'in_progress', 'in_review', 'done', 'cancelled'];
const PRIORITIES = ['lowest', 'low', 'medium', 'high', 'highest'];

// A small deterministic generator: a failure replays exactly.
let seed = 7;
const rnd = (n: number) => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return (seed >>> 8) % n; // the low bits of this generator repeat with a short period
};
const pick = <T>(xs: readonly T[]): T => xs[rnd(xs.length)]!;

async function viaHttp(lane: string, qs: string): Promise<unknown[]> {
  const out: unknown[] = [];
  let cursor: string | null = null;
  do {
    const r = await s.call('GET', `/projects/${P}/ready/${lane}?limit=100${qs ? `&${qs}` : ''}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    out.push(...r.body.items);
    cursor = r.body.nextCursor;
  } while (cursor);
  return out;
}

function viaSql(lane: 'bugs' | 'containers', qs: string): unknown[] {
  const project = s.db.prepare('SELECT * FROM projects WHERE key = ?').get(P) as never as { id: string; key: string };
  const params = readLaneParams(s.db, project as never, new URLSearchParams(qs), lane);
  return lane === 'bugs' ? renderBugGroups(s.db, readyBugGroups(s.db, project.id, params)) : readyContainers(s.db, project.id, params);
}

describe('the maintained ready set answers what the SQL answers', () => {
  test('after every one of 300 random writes', { timeout: 120_000 }, async () => {
    const keys: string[] = [];
    const sprint = s.admin.createSprint({ projectKey: P, name: 'S', state: 'active' }).id;
    const make = () => {
      const parent = keys.length && rnd(3) > 0 ? pick(keys) : undefined;
      const kind = parent ? pick(['story', 'task', 'bug', 'subtask'] as const) : pick(KINDS);
      const w = { projectKey: P, kind, title: `item ${keys.length}`, status: pick(STATUSES), priority: pick(PRIORITIES) };
      try {
        keys.push(s.admin.createWorkItem({ ...w, parentKey: parent }).key);
      } catch {
        keys.push(s.admin.createWorkItem({ ...w, kind: pick(['epic', 'task', 'bug'] as const) }).key); // not allowed there: at the root
      }
    };
    for (let i = 0; i < 60; i++) make();
    const qss = {
      bugs: ['', 'allowSoftBlock=true', 'priority=high&priority=highest', `sprintId=${sprint}`, 'kind=subtask', 'assigneeId=none'],
      containers: ['', 'priority=medium', 'assigneeId=none'],
    };
    await viaHttp('bugs', ''); // the index is read whole once; from here on it only follows writes
    const id = (key: string) => (s.db.prepare('SELECT id FROM work_items WHERE key = ?').get(key) as { id: string }).id;
    const writes: (() => Promise<unknown> | void)[] = [
      make,
      () => s.admin.setStatus(pick(keys), pick(STATUSES)),
      () => s.admin.archiveItem(pick(keys), rnd(2) === 0),
      () => s.admin.setFields(pick(keys), { priority: pick(PRIORITIES) }),
      () => s.admin.setFields(pick(keys), { sprint_id: rnd(2) ? sprint : null }),
      () => s.admin.setFields(pick(keys), { assignee_id: rnd(2) ? s.userId : null }),
      () => {
        const [a, b] = [pick(keys), pick(keys)];
        if (a !== b) s.db.prepare(`INSERT OR IGNORE INTO work_item_links (from_id, to_id, kind) VALUES (?, ?, 'blocks')`).run(id(a), id(b));
      },
      () => {
        const [a, b] = [pick(keys), pick(keys)];
        if (a !== b) s.db.prepare(`INSERT OR IGNORE INTO work_item_links (from_id, to_id, kind) VALUES (?, ?, 'blocks')`).run(id(a), id(b));
      },
      () => {
        const l = s.db.prepare(`SELECT from_id, to_id FROM work_item_links ORDER BY random() LIMIT 1`).get() as { from_id: string; to_id: string } | undefined;
        if (l) s.db.prepare('DELETE FROM work_item_links WHERE from_id = ? AND to_id = ?').run(l.from_id, l.to_id);
      },
      // A move under another parent (raw SQL: never under its own subtree, so no cycle).
      () => {
        const [a, b] = [pick(keys), pick(keys)];
        const under = s.db
          .prepare(`WITH RECURSIVE t(id) AS (SELECT ? UNION SELECT w.id FROM work_items w JOIN t ON w.parent_id = t.id) SELECT 1 FROM t WHERE id = ?`)
          .get(id(a), id(b));
        if (!under) s.db.prepare('UPDATE work_items SET parent_id = ? WHERE id = ?').run(rnd(4) ? id(b) : null, id(a));
      },
      // The writes that reach furthest: a blocker's status or archive changes what it blocks and
      // everything beneath that.
      () => {
        const l = s.db.prepare(`SELECT w.key FROM work_item_links l JOIN work_items w ON w.id = l.from_id ORDER BY random() LIMIT 1`).get() as
          | { key: string }
          | undefined;
        if (l) s.admin.setStatus(l.key, pick(STATUSES));
      },
      () => {
        const l = s.db.prepare(`SELECT w.key FROM work_item_links l JOIN work_items w ON w.id = l.from_id ORDER BY random() LIMIT 1`).get() as
          | { key: string }
          | undefined;
        if (l) s.admin.archiveItem(l.key, rnd(2) === 0);
      },
      () => s.db.prepare('UPDATE work_items SET kind = ? WHERE id = ?').run(pick(KINDS), id(pick(keys))),
      () => s.call('PATCH', `/work-items/${pick(keys)}`, { body: { title: `renamed ${rnd(1000)}` } }),
    ];
    for (let i = 0; i < 300; i++) {
      await writes[rnd(writes.length)]!();
      const lane = i % 2 ? 'bugs' : 'containers';
      const qs = pick(qss[lane]);
      expect(await viaHttp(lane, qs), `write ${i}, ${lane}?${qs}`).toEqual(viaSql(lane, qs));
    }
  });
});
