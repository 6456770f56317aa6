// listDesigns against the real local service: approved designs only, newest first, the two
// narrowing parameters, paging, and no download links.
import { describe, expect, test } from 'vitest';
import { createDesign, setDesignStatus } from '../../../src/server/designs/index.js';
import { tokenWith } from '../support/http.js';
import { useProjectService } from '../support/project-service.js';

const { svc, call, project } = useProjectService('D', 'Designs');

/** A design created `minutesAgo` minutes ago (the listing is newest first). */
function design(key: string, title: string, minutesAgo: number, opts: { status?: 'draft' | 'approved'; paths?: string[] } = {}): string {
  return createDesign(svc.db, {
    projectId: svc.admin.projectId(key),
    title,
    status: opts.status ?? 'approved',
    createdAt: new Date(Date.now() - minutesAgo * 60_000),
    assets: (opts.paths ?? []).map((p) => ({ name: p.split('/').at(-1)!, repository: 'acme/app', sourcePath: p, mediaType: 'image/png', sizeBytes: 100 })),
  });
}

/** Every property name in a JSON value, at any depth. */
function keysOf(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(keysOf);
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([k, v]) => [k, ...keysOf(v)]);
}

const titles = (body: { items: { title: string }[] }) => body.items.map((d) => d.title);

describe('GET /projects/{projectKey}/designs (listDesigns)', () => {
  test('lists approved designs only, newest first, with assets and no download links', async () => {
    const key = project();
    design(key, 'Old screen', 30, { paths: ['design/old.png'] });
    design(key, 'Draft screen', 5, { status: 'draft' });
    design(key, 'New screen', 10, { paths: ['design/new/a.png', 'design/new/b.png'] });
    const res = await call('GET', `/projects/${key}/designs`);
    expect(res.status).toBe(200);
    expect(titles(res.body)).toEqual(['New screen', 'Old screen']);
    expect(res.body.items[0].assets.map((a: { sourcePath: string }) => a.sourcePath)).toEqual(['design/new/a.png', 'design/new/b.png']);
    // The keys, not the text: a random id can spell "uRl" (CI once drew dsa_…SuRlPu…).
    expect(keysOf(res.body).filter((k) => /url|href|download/i.test(k))).toEqual([]);
  });

  test('approval later brings a design in; un-approving takes it out', async () => {
    const key = project();
    const id = design(key, 'Pending', 1, { status: 'draft' });
    expect(titles((await call('GET', `/projects/${key}/designs`)).body)).toEqual([]);
    setDesignStatus(svc.db, id, 'approved');
    const listed = await call('GET', `/projects/${key}/designs`);
    expect(listed.body.items[0]).toMatchObject({ id, status: 'approved' });
    expect(listed.body.items[0].approvedAt).not.toBeNull();
    setDesignStatus(svc.db, id, 'rejected');
    expect(titles((await call('GET', `/projects/${key}/designs`)).body)).toEqual([]);
  });

  test.each([
    ['pathPrefix keeps designs holding a matching asset', 'pathPrefix=design/checkout/', ['Checkout']],
    ['pathPrefix is exact and case-sensitive', 'pathPrefix=Design/', []],
    ['query is a case-insensitive title substring', 'query=CHECK', ['Checkout']],
    ['both narrow together', 'pathPrefix=design/&query=profile', ['Profile']],
    ['empty values mean omitted', 'pathPrefix=&query=', ['Checkout', 'Profile', 'Loose']],
  ])('%s', async (_why, query, expected) => {
    const key = project();
    design(key, 'Loose', 30, { paths: ['assets/loose.png'] });
    design(key, 'Profile', 20, { paths: ['design/profile/p.png'] });
    design(key, 'Checkout', 10, { paths: ['design/checkout/c.png', 'assets/shared.png'] });
    const res = await call('GET', `/projects/${key}/designs?${query}`);
    expect([res.status, titles(res.body)]).toEqual([200, expected]);
  });

  test('pages by cursor; a cursor of another query is 422', async () => {
    const key = project();
    for (let i = 1; i <= 3; i++) design(key, `Screen ${i}`, 10 - i);
    const first = await call('GET', `/projects/${key}/designs?limit=2`);
    expect(titles(first.body)).toEqual(['Screen 3', 'Screen 2']);
    const second = await call('GET', `/projects/${key}/designs?limit=2&cursor=${first.body.nextCursor}`);
    expect([titles(second.body), second.body.nextCursor]).toEqual([['Screen 1'], null]);
    const foreign = await call('GET', `/projects/${key}/designs?limit=2&query=screen&cursor=${first.body.nextCursor}`);
    expect([foreign.status, foreign.body.code]).toEqual([422, 'INVALID_REQUEST']);
  });

  test.each([['limit=0'], ['limit=-5'], ['limit=1.5'], ['cursor=forged']])('%s is 422 INVALID_REQUEST', async (query) => {
    const res = await call('GET', `/projects/${project()}/designs?${query}`);
    expect([res.status, res.body.code]).toEqual([422, 'INVALID_REQUEST']);
  });

  test.each([
    ['no token', null, 'PROJ', 401, 'UNAUTHORIZED'],
    ['a token without project:browse', 'no-browse', 'PROJ', 403, 'FORBIDDEN'],
    ['an unknown project', 'all', 'NOPE', 404, 'NOT_FOUND'],
    ['a project outside a narrowed token', 'narrowed', 'PROJ', 404, 'NOT_FOUND'],
  ])('%s: %s', async (_why, kind, key, status, code) => {
    const token =
      kind === null
        ? null
        : kind === 'no-browse'
          ? tokenWith(svc, ['work_item:edit', 'sprint:manage', 'ai:plan'])
          : kind === 'narrowed'
            ? tokenWith(svc, ['project:browse'], project())
            : svc.token;
    const res = await call('GET', `/projects/${key}/designs`, undefined, token);
    expect([res.status, res.body.code]).toEqual([status, code]);
  });
});
