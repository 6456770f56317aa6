// A hosted run's own credential (`svc_run_…`): authenticated through the dispatch-runs module's
// run_credentials table, limited to the operations a run credential may call (403 otherwise), and
// dead (401) once revoked with its run.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { mintRunCredential } from '../../../src/server/dispatch-runs/index.js';
import { startTestService, type TestService } from '../../support/service.js';

let s: TestService;
let runId: string;
let runToken: string;
let card: string;
beforeAll(async () => {
  s = await startTestService();
  card = s.admin.createWorkItem({ projectKey: s.projectKey, kind: 'task', title: 'card', targetRepo: 'acme/web' }).key;
  const opened = await s.call('POST', '/dispatch-runs', {
    body: { projectKey: s.projectKey, command: 'run', origin: 'hosted', cards: [{ workItemKey: card }] },
  });
  expect(opened.status).toBe(201);
  runId = opened.body.run.id;
  runToken = mintRunCredential(s.db, runId);
});
afterAll(() => s.close());

describe('a run credential', () => {
  test('reads its own run and the work items of its cards', async () => {
    expect((await s.call('GET', `/dispatch-runs/${runId}`, { token: runToken })).status).toBe(200);
    const item = await s.call('GET', `/work-items/${card}`, { token: runToken });
    expect(item.status).toBe(200);
    expect(item.body.key).toBe(card);
  });

  test('a work item that is not one of its cards is 404, like a missing one', async () => {
    const other = s.admin.createWorkItem({ projectKey: s.projectKey, kind: 'task', title: 'not a card' }).key;
    const r = await s.call('GET', `/work-items/${other}`, { token: runToken });
    expect(r.status).toBe(404);
    expect(r.body.code).toBe('NOT_FOUND');
  });

  test.each([
    ['GET', '/me'],
    ['GET', '/workspaces'],
    ['GET', '/projects'],
    ['GET', '/projects/PROJ'],
    ['GET', '/projects/PROJ/work-items'],
    ['GET', '/projects/PROJ/work-items/count'],
    ['POST', '/projects/PROJ/work-items'],
    ['PATCH', '/work-items/PROJ-1'],
    ['GET', '/projects/PROJ/ready/bugs'],
    ['GET', '/projects/PROJ/ready/containers'],
  ])('%s %s is 403 FORBIDDEN', async (method, path) => {
    const r = await s.call(method, path, { token: runToken, body: method === 'GET' ? undefined : { kind: 'task', title: 'x' } });
    expect(r.status).toBe(403);
    expect(r.body.code).toBe('FORBIDDEN');
  });

  test('dies with its run: 401 afterwards', async () => {
    const closed = await s.call('POST', `/dispatch-runs/${runId}/close`, { body: { stopReason: 'completed', status: 'succeeded' } });
    expect(closed.status).toBe(200);
    const r = await s.call('GET', `/dispatch-runs/${runId}`, { token: runToken });
    expect(r.status).toBe(401);
    expect(r.body.code).toBe('UNAUTHORIZED');
  });
});
