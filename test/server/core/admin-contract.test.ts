// The admin API seeds stores for tests, demos and benchmarks: it refuses what the contract does not
// allow, so no seeded item answers a priority or status that no client can parse.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startTestService, type TestService } from '../../support/service.js';

let s: TestService;
beforeAll(async () => {
  s = await startTestService();
});
afterAll(async () => {
  await s.close();
});

test('a priority outside the contract is refused on create and on update', () => {
  const count = () => (s.db.prepare('SELECT COUNT(*) AS n FROM work_items').get() as { n: number }).n;
  const before = count();
  expect(() => s.admin.createWorkItem({ projectKey: 'PROJ', kind: 'bug', title: 'x', priority: 'urgent' })).toThrow(/unknown priority urgent/);
  expect(count()).toBe(before);
  const key = s.admin.createWorkItem({ projectKey: 'PROJ', kind: 'bug', title: 'x', priority: 'highest' }).key;
  expect(() => s.admin.setFields(key, { priority: 'urgent' })).toThrow(/unknown priority urgent/);
  expect(() => s.admin.setFields(key, { status: 'blocked' })).toThrow(/unknown status blocked/);
  expect(s.admin.workItem(key)).toMatchObject({ priority: 'highest', status: 'todo' });
});
