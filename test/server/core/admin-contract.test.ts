// The admin API seeds stores for tests, demos and benchmarks: it refuses what the contract does not
// allow, so no seeded item answers a priority or status that no client can parse.
import { expect, test } from 'vitest';
import { serviceForFile } from '../../support/service.js';

const s = serviceForFile();

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
