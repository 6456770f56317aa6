// openDispatchRun (open) and 26 (read) over real HTTP.
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { startHarness, type Harness } from './harness.js';

let h: Harness;
beforeEach(async () => {
  h = await startHarness();
});
afterEach(async () => {
  await h.svc.close();
});

describe('open (openDispatchRun)', () => {
  test('records the run: cards in the given order, skip reasons, defaults, the opener', async () => {
    const [a, b, c, scope] = h.items(4);
    const res = await h.svc.call('POST', '/dispatch-runs', {
      body: {
        projectKey: 'PROJ',
        command: 'run_scope',
        scopeKey: scope,
        agent: 'claude',
        model: 'opus',
        cards: [{ workItemKey: c }, { workItemKey: a, skipReason: 'executor: human' }, { workItemKey: b }],
      },
    });
    expect(res.status).toBe(201);
    expect(res.body.created).toBe(true);
    const run = res.body.run;
    expect(run).toMatchObject({
      command: 'run_scope',
      origin: 'local',
      status: 'running',
      stopReason: null,
      agent: 'claude',
      model: 'opus',
      endedAt: null,
      createdById: h.svc.userId,
      agentInstance: null,
      seq: 0,
      scopeWorkItemId: h.svc.admin.workItem(scope!).id,
      scopeLabel: scope,
      projectId: h.svc.admin.projectId('PROJ'),
    });
    // A local run is counted silent from its open.
    expect(run.lastHeartbeatAt).toBe(run.startedAt);
    expect(run.cards.map((x: { workItemKey: string; disposition: string; skipReason: string | null }) => [x.workItemKey, x.disposition, x.skipReason])).toEqual(
      [
        [c, 'queued', null],
        [a, 'skipped', 'executor: human'],
        [b, 'queued', null],
      ],
    );
  });

  test('a given scopeLabel is kept; a hosted run has no heartbeat stamp; no cards is a run with no legs', async () => {
    const [scope] = h.items(1);
    const run = await h.open({ scopeKey: scope, scopeLabel: 'The big one', origin: 'hosted' });
    expect(run).toMatchObject({ scopeLabel: 'The big one', origin: 'hosted', lastHeartbeatAt: null, cards: [] });
    const bare = await h.open({ scopeLabel: 'label only' });
    expect(bare).toMatchObject({ scopeWorkItemId: null, scopeLabel: 'label only' });
  });

  test('the same idempotencyKey returns the existing run unchanged, created false, nothing doubled', async () => {
    const [a, b] = h.items(2);
    const body = { projectKey: 'PROJ', command: 'run', idempotencyKey: 'ci-42', cards: [{ workItemKey: a }] };
    const first = await h.svc.call('POST', '/dispatch-runs', { body });
    await h.svc.call('POST', `/dispatch-runs/${first.body.run.id}/events`, { body: { events: [{ workItemKey: a, disposition: 'running' }] } });
    // A retry (even one whose cards differ) must find the run, not conflict with it or open another.
    const again = await h.svc.call('POST', '/dispatch-runs', { body: { ...body, cards: [{ workItemKey: a }, { workItemKey: b }] } });
    expect(again.status).toBe(201);
    expect(again.body.created).toBe(false);
    expect(again.body.run.id).toBe(first.body.run.id);
    expect(again.body.run.cards).toEqual([expect.objectContaining({ workItemKey: a, disposition: 'running' })]);
    expect(again.body.run.seq).toBe(1);
    const count = h.svc.db.prepare('SELECT COUNT(*) AS n FROM dispatch_runs').get() as { n: number };
    expect(count.n).toBe(1);
    // Another key is another run.
    const other = await h.svc.call('POST', '/dispatch-runs', { body: { ...body, idempotencyKey: 'ci-43', cards: [{ workItemKey: b }] } });
    expect(other.body.created).toBe(true);
  });

  test("an idempotencyKey already used in another project is a 409, not that project's run", async () => {
    h.svc.admin.createProject({ workspaceId: h.svc.workspaceId, key: 'OTHER', name: 'Other' });
    await h.open({ idempotencyKey: 'k1' });
    const res = await h.svc.call('POST', '/dispatch-runs', { body: { projectKey: 'OTHER', command: 'run', idempotencyKey: 'k1' } });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('CONFLICT');
  });

  test('409 CONFLICT naming the keys and the run holding each while a card is in another running run, its leg ended or not; fine once it closes', async () => {
    const [a, b, c] = h.items(3);
    const first = await h.open({ cards: [{ workItemKey: a }, { workItemKey: b }, { workItemKey: c }] });
    await h.svc.call('POST', `/dispatch-runs/${first.id}/events`, {
      body: {
        events: [
          { workItemKey: b, disposition: 'running' },
          { workItemKey: c, disposition: 'implemented' },
        ],
      },
    });
    const clash = await h.svc.call('POST', '/dispatch-runs', {
      body: { projectKey: 'PROJ', command: 'run', cards: [{ workItemKey: c }, { workItemKey: b }, { workItemKey: a }] },
    });
    expect(clash.status).toBe(409);
    expect(clash.body.code).toBe('CONFLICT');
    // A leg that already ended (c: implemented) holds its card too: it moved no status, so c looks
    // ready to another machine until the run closes.
    expect(clash.body.error).toBe(
      `already in another running run of this project: ${c} (in run ${first.id}), ${b} (in run ${first.id}), ${a} (in run ${first.id})`,
    );
    // A card the new run skips is free.
    await h.open({
      cards: [
        { workItemKey: c, skipReason: 'taken elsewhere' },
        { workItemKey: a, skipReason: 'taken elsewhere' },
      ],
    });
    expect((await h.svc.call('POST', `/dispatch-runs/${first.id}/close`, { body: { stopReason: 'interrupted' } })).status).toBe(200);
    const after = await h.open({ cards: [{ workItemKey: a }, { workItemKey: b }] });
    expect(after.cards.map((x) => x.disposition)).toEqual(['queued', 'queued']);
  });

  test.each([
    ['an unknown card', (k: string[]) => ({ cards: [{ workItemKey: k[0] }, { workItemKey: 'PROJ-999' }] }), 'PROJ-999'],
    ['a duplicate card', (k: string[]) => ({ cards: [{ workItemKey: k[0] }, { workItemKey: k[0], skipReason: 'x' }] }), 'more than once'],
    ['a scopeKey that is not an item of the project', () => ({ scopeKey: 'PROJ-777' }), 'PROJ-777'],
    ['a card of another project', () => ({ cards: [{ workItemKey: 'OTHER-1' }] }), 'OTHER-1'],
    ['an unknown field', () => ({ priority: 'high' }), ''],
    ['an unknown command', () => ({ command: 'sprint' }), ''],
    ['an unknown origin', () => ({ origin: 'instance' }), ''],
  ])('422 INVALID_REQUEST for %s, and nothing is recorded', async (_name, make, names) => {
    h.svc.admin.createProject({ workspaceId: h.svc.workspaceId, key: 'OTHER', name: 'Other' });
    h.svc.admin.createWorkItem({ projectKey: 'OTHER', kind: 'task', title: 'elsewhere' });
    const keys = h.items(1);
    const res = await h.svc.call('POST', '/dispatch-runs', { body: { projectKey: 'PROJ', command: 'run', ...make(keys) } });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('INVALID_REQUEST');
    expect(res.body.error).toContain(names);
    expect((h.svc.db.prepare('SELECT COUNT(*) AS n FROM dispatch_runs').get() as { n: number }).n).toBe(0);
  });

  test('404 for a project that does not exist or that the token cannot see', async () => {
    h.svc.admin.createProject({ workspaceId: h.svc.workspaceId, key: 'SECRET', name: 's', accessMode: 'members' });
    h.svc.admin.createProject({ workspaceId: h.svc.workspaceId, key: 'OTHER', name: 'o' });
    const narrowed = h.svc.admin.createToken({ workspaceId: h.svc.workspaceId, userId: h.svc.userId, projectKey: 'OTHER' }).token;
    for (const [projectKey, token] of [
      ['NOPE', undefined],
      ['SECRET', undefined],
      ['PROJ', narrowed],
    ] as const) {
      const res = await h.svc.call('POST', '/dispatch-runs', { token, body: { projectKey, command: 'run' } });
      expect(res.status, projectKey).toBe(404);
      expect(res.body.code).toBe('NOT_FOUND');
    }
  });

  test('401 without a valid token, 403 without work_item:edit', async () => {
    expect((await h.svc.call('POST', '/dispatch-runs', { token: null, body: { projectKey: 'PROJ', command: 'run' } })).status).toBe(401);
    const browse = h.svc.admin.createToken({ workspaceId: h.svc.workspaceId, userId: h.svc.userId, scopes: ['project:browse'] }).token;
    const res = await h.svc.call('POST', '/dispatch-runs', { token: browse, body: { projectKey: 'PROJ', command: 'run' } });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('FORBIDDEN');
  });
});

describe('read (getDispatchRun)', () => {
  test('answers the full run with its cards and cursor', async () => {
    const [a] = h.items(1);
    const run = await h.open({ cards: [{ workItemKey: a }] });
    const browse = h.svc.admin.createToken({ workspaceId: h.svc.workspaceId, userId: h.svc.userId, scopes: ['project:browse'] }).token;
    const res = await h.svc.call('GET', `/dispatch-runs/${run.id}`, { token: browse });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(run);
  });

  test('404 for an unknown run and for a run the token cannot see (same answer)', async () => {
    const run = await h.open();
    h.svc.admin.createProject({ workspaceId: h.svc.workspaceId, key: 'OTHER', name: 'o' });
    const narrowed = h.svc.admin.createToken({ workspaceId: h.svc.workspaceId, userId: h.svc.userId, projectKey: 'OTHER' }).token;
    const ws = h.svc.admin.createWorkspace({ name: 'Elsewhere', slug: 'elsewhere' });
    h.svc.admin.addMember(ws.id, h.svc.userId);
    const foreign = h.svc.admin.createToken({ workspaceId: ws.id, userId: h.svc.userId }).token;
    for (const [id, token] of [
      ['run_nope', undefined],
      [run.id, narrowed],
      [run.id, foreign],
    ] as const) {
      const res = await h.svc.call('GET', `/dispatch-runs/${id}`, { token });
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('NOT_FOUND');
    }
  });
});
