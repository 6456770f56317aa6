// appendDispatchEvents: the ordered event stream of a run, and the legs its dispositions move.
import { afterEach, beforeEach, expect, test } from 'vitest';
import type { DispatchRun } from '../../../src/contract/types.js';
import { moves, startHarness, type Harness } from './harness.js';

let h: Harness;
let run: DispatchRun;
let keys: string[];
beforeEach(async () => {
  h = await startHarness();
  keys = h.items(3);
  run = await h.open({ cards: keys.map((workItemKey) => ({ workItemKey })) });
});
afterEach(async () => {
  await h.svc.close();
});

const append = (events: unknown[], id = run.id, token?: string) => h.svc.call('POST', `/dispatch-runs/${id}/events`, { token, body: { events } });
const read = async (): Promise<DispatchRun> => (await h.svc.call('GET', `/dispatch-runs/${run.id}`)).body;
const storedSeqs = () =>
  (h.svc.db.prepare('SELECT seq FROM dispatch_events WHERE run_id = ? ORDER BY rowid').all(run.id) as { seq: number }[]).map((r) => r.seq);

test('seq numbers every event in order across batches; the append answers the cursor the read shows', async () => {
  const one = await append([{ body: 'starting' }, { workItemKey: keys[0] }, {}]);
  expect(one.status).toBe(200);
  expect(one.body).toEqual({ runId: run.id, appended: 3, seq: 3, cards: [] });
  const two = await append([{ body: 'more' }, { body: 'and more' }]);
  expect(two.body).toMatchObject({ appended: 2, seq: 5 });
  expect((await read()).seq).toBe(5);
  expect(storedSeqs()).toEqual([1, 2, 3, 4, 5]);
  const empty = await append([]);
  expect(empty.body).toMatchObject({ appended: 0, seq: 5, cards: [] });
});

test('a disposition moves its leg in the same append; the answer lists every moved leg once, in run order', async () => {
  const res = await append([
    ...moves('running', keys[2]!, keys[0]!),
    { workItemKey: keys[0], disposition: 'implemented', sessionBranch: `svc/${keys[0]}`, exitCode: 0 },
    { workItemKey: keys[2], disposition: 'failed', exitCode: 3 },
  ]);
  expect(res.status).toBe(200);
  expect(res.body.seq).toBe(4);
  expect(
    res.body.cards.map((c: { workItemKey: string; disposition: string; sessionBranch: string | null; exitCode: number | null }) => [
      c.workItemKey,
      c.disposition,
      c.sessionBranch,
      c.exitCode,
    ]),
  ).toEqual([
    [keys[0], 'implemented', `svc/${keys[0]}`, 0],
    [keys[2], 'failed', null, 3],
  ]);
  const after = await read();
  expect(after.cards.map((c) => c.disposition)).toEqual(['implemented', 'queued', 'failed']);
  // A later event without sessionBranch/exitCode keeps the leg's earlier ones.
  await append([{ workItemKey: keys[0], disposition: 'implemented' }]);
  expect((await read()).cards[0]).toMatchObject({ sessionBranch: `svc/${keys[0]}`, exitCode: 0 });
});

test('a bad event refuses the whole batch: no event stored, no leg moved, seq unchanged', async () => {
  await append([{ body: 'one' }]);
  const other = h.items(1)[0]!;
  for (const [events, names] of [
    [[...moves('running', keys[0]!), { workItemKey: other, disposition: 'implemented' }], other],
    [[...moves('running', keys[0]!), { disposition: 'failed' }], 'workItemKey'],
    [[{ workItemKey: keys[0], disposition: 'done' }], ''],
    [[{ workItemKey: keys[0], colour: 'blue' }], ''],
    [[{ workItemKey: keys[0], exitCode: 1.5 }], ''],
  ] as const) {
    const res = await append([...events]);
    expect(res.status, JSON.stringify(events)).toBe(422);
    expect(res.body.code).toBe('INVALID_REQUEST');
    expect(res.body.error).toContain(names);
  }
  const after = await read();
  expect(after.seq).toBe(1);
  expect(after.cards.map((c) => c.disposition)).toEqual(['queued', 'queued', 'queued']);
  expect(storedSeqs()).toEqual([1]);
  // An event never adds a card.
  expect(after.cards).toHaveLength(3);
});

test('at most 200 events per append: 200 are stored, 201 are a 422', async () => {
  const batch = (n: number) => Array.from({ length: n }, (_, i) => ({ body: `line ${i}` }));
  const over = await append(batch(201));
  expect(over.status).toBe(422);
  expect(over.body.code).toBe('INVALID_REQUEST');
  const full = await append(batch(200));
  expect(full.status).toBe(200);
  expect(full.body).toMatchObject({ appended: 200, seq: 200 });
});

test('body is limited to 16,384 bytes of UTF-8, counted in bytes and refused (never truncated) above', async () => {
  // '€' is 3 bytes: 5461 × 3 + 1 = 16,384 bytes in only 5,462 characters.
  const exact = '€'.repeat(5461) + 'x';
  expect(Buffer.byteLength(exact)).toBe(16_384);
  const ok = await append([{ body: exact }]);
  expect(ok.status).toBe(200);
  const stored = h.svc.db.prepare('SELECT body FROM dispatch_events WHERE run_id = ? AND seq = 1').get(run.id) as { body: string };
  expect(stored.body).toBe(exact);
  for (const body of ['€'.repeat(5461) + 'xy', 'é'.repeat(8193), 'x'.repeat(16_385)]) {
    const res = await append([{ body }]);
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('INVALID_REQUEST');
  }
  expect(storedSeqs()).toEqual([1]);
});

test('409 RUN_CLOSED on a closed run, and nothing is stored', async () => {
  await h.svc.call('POST', `/dispatch-runs/${run.id}/close`, { body: { stopReason: 'completed' } });
  const res = await append([{ body: 'late' }]);
  expect(res.status).toBe(409);
  expect(res.body.code).toBe('RUN_CLOSED');
  expect((await append([])).status).toBe(409);
  expect(storedSeqs()).toEqual([]);
});

test('404 for an unknown run; 403 without work_item:edit', async () => {
  expect((await append([{}], 'run_nope')).status).toBe(404);
  const browse = h.svc.admin.createToken({ workspaceId: h.svc.workspaceId, userId: h.svc.userId, scopes: ['project:browse'] }).token;
  expect((await append([{}], run.id, browse)).status).toBe(403);
});
