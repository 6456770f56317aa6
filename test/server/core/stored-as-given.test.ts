// Values are stored as given and returned as stored: text SQLite would hand back cut at a NUL, and
// a date the calendar does not have (which Date would shift), are refused with 422 over real HTTP.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestService, type TestService } from '../../support/service.js';

let s: TestService;
beforeAll(async () => {
  s = await startTestService();
});
afterAll(() => s.close());

const create = (body: unknown) => s.call('POST', `/projects/${s.projectKey}/work-items`, { body });
const count = () => (s.db.prepare('SELECT count(*) AS n FROM work_items').get() as { n: number }).n;

describe('a NUL character in a text field', () => {
  test.each([
    ['title', { kind: 'task', title: 'cut\u0000here' }, 'title'],
    ['descriptionMd', { kind: 'task', title: 'ok', descriptionMd: 'a\u0000b' }, 'descriptionMd'],
    ['a target repo', { kind: 'task', title: 'ok', targetRepos: ['fine/repo', 'bad\u0000'] }, 'targetRepos[1]'],
  ])('in %s is refused on create with 422 naming the field, and nothing is stored', async (_name, body, field) => {
    const before = count();
    const r = await create(body);
    expect(r.status).toBe(422);
    expect(r.body).toEqual({ code: 'INVALID_REQUEST', error: `${field}: ${field} must not contain a NUL character` });
    expect(count()).toBe(before);
  });

  test('is refused on update, and the item keeps its title', async () => {
    const key = (await create({ kind: 'task', title: 'Intact' })).body.key as string;
    const r = await s.call('PATCH', `/work-items/${key}`, { body: { title: 'In\u0000tact' } });
    expect(r.status).toBe(422);
    expect(r.body.error).toBe('title: title must not contain a NUL character');
    expect((await s.call('GET', `/work-items/${key}`)).body.title).toBe('Intact');
  });

  test('text around it without a NUL (other control characters, non-BMP) comes back exactly as sent', async () => {
    const title = 'tab\there \u0001 \u{1F600} é';
    const created = await create({ kind: 'task', title });
    expect(created.status).toBe(201);
    expect((await s.call('GET', `/work-items/${created.body.key}`)).body.title).toBe(title);
  });
});

describe('an impossible date-time', () => {
  test.each(['2025-02-30T00:00:00Z', '2025-02-29T12:00Z', '2026-04-31T00:00:00.5Z'])('%s is refused with 422, not shifted', async (dueDate) => {
    const before = count();
    const r = await create({ kind: 'task', title: 'due', dueDate });
    expect(r.status).toBe(422);
    expect(r.body).toEqual({ code: 'INVALID_REQUEST', error: 'dueDate: dueDate must be a UTC date-time ending in Z' });
    expect(count()).toBe(before);
  });

  test('a real leap day is accepted and keeps its day', async () => {
    const r = await create({ kind: 'task', title: 'leap', dueDate: '2024-02-29T23:59:59Z' });
    expect(r.status).toBe(201);
    expect((await s.call('GET', `/work-items/${r.body.key}`)).body.dueDate).toBe('2024-02-29T23:59:59.000Z');
  });
});
