// validateResponse and validateResponseHeaders: what catches the local service drifting from the
// contract. Responses are checked against known enums and, through x-svc-closed, known fields.
import { describe, expect, test } from 'vitest';
import { validateResponse, validateResponseHeaders } from '../../src/contract/validate.js';
import { API_VERSION } from '../../src/contract/types.js';
import { resourceSamples } from './samples.js';

const detail = resourceSamples.WorkItemDetail as Record<string, unknown>;
const project = resourceSamples.Project as Record<string, unknown>;
const run = resourceSamples.DispatchRun as Record<string, unknown>;
const messages = (issues: { message: string }[]) => issues.map((issue) => issue.message);

describe('validateResponse', () => {
  test('accepts what the contract documents', () => {
    expect(validateResponse('getWorkItem', 200, detail)).toEqual([]);
    expect(validateResponse('createWorkItem', 201, detail)).toEqual([]);
    expect(validateResponse('openDispatchRun', 201, resourceSamples.DispatchRunOpened)).toEqual([]);
    expect(validateResponse('listBacklog', 200, resourceSamples.BacklogPage)).toEqual([]);
    expect(validateResponse('listDesigns', 200, { items: [{ id: 'd1', title: 'Any shape' }], nextCursor: null })).toEqual([]);
    expect(validateResponse('heartbeatDispatchRun', 204, undefined)).toEqual([]);
  });

  test('an undocumented status is an issue', () => {
    expect(messages(validateResponse('getMe', 404, { error: 'x', code: 'NOT_FOUND' }))).toEqual(['status 404 is not documented for getMe']);
    expect(validateResponse('getWorkItem', 201, detail)).not.toEqual([]);
  });

  test('a 204 carries no body', () => {
    expect(messages(validateResponse('heartbeatDispatchRun', 204, {}))).toEqual(['a 204 answer has no body']);
  });

  test.each([
    ['a missing field', { ...detail, readiness: undefined }, 'readiness is required'],
    ['an unknown kind (the local service emits only known values)', { ...detail, kind: 'saga' }, 'kind must be one of epic, story, task, subtask, bug'],
    ['a timestamp with an offset', { ...detail, updatedAt: '2026-01-01T00:00:00+01:00' }, 'updatedAt must be a UTC date-time ending in Z'],
    ['a field the document does not declare', { ...detail, project_id: 'p1' }, "unknown property 'project_id'"],
    ['a nested undeclared field', { ...detail, links: { ...(detail.links as object), parent: [] } }, "unknown property 'links.parent'"],
    ['a non-integer estimate', { ...detail, estimateMinutes: 1.5 }, 'estimateMinutes must be integer or null'],
  ])('getWorkItem 200: %s', (_what, body, message) => {
    expect(messages(validateResponse('getWorkItem', 200, JSON.parse(JSON.stringify(body))))).toContain(message);
  });

  test("statusCategory and a run's continues/repair may be absent", () => {
    const { statusCategory: _category, ...withoutCategory } = detail;
    expect(validateResponse('getWorkItem', 200, withoutCategory)).toEqual([]);
    const { continues: _continues, repair: _repair, ...plainRun } = run;
    expect(validateResponse('getDispatchRun', 200, plainRun)).toEqual([]);
  });

  test('accessLevel is derived from accessMode and is never limited', () => {
    expect(validateResponse('getProject', 200, { ...project, accessMode: 'workspace', accessLevel: 'open' })).toEqual([]);
    expect(messages(validateResponse('getProject', 200, { ...project, accessMode: 'workspace', accessLevel: 'private' }))).toContain(
      'accessLevel must be "open"',
    );
    expect(validateResponse('getProject', 200, { ...project, accessLevel: 'limited' })).not.toEqual([]);
  });

  test('error bodies: {error, code}, a code of the status, room for more fields', () => {
    expect(validateResponse('getProject', 404, { error: 'Project not found.', code: 'NOT_FOUND' })).toEqual([]);
    expect(validateResponse('listFolders', 404, { error: 'No such folder.', code: 'FOLDER_NOT_FOUND' })).toEqual([]);
    expect(validateResponse('updateFolder', 409, { error: 'Taken.', code: 'FOLDER_NAME_TAKEN', details: {} })).toEqual([]);
    expect(messages(validateResponse('getProject', 404, { error: 'Nope.', code: 'INVALID_REQUEST' }))).toEqual([
      'code must be one of NOT_FOUND, FOLDER_NOT_FOUND',
    ]);
    expect(messages(validateResponse('getProject', 404, { error: 'Nope.' }))).toEqual(['code is required']);
    expect(messages(validateResponse('getProject', 401, { error: '', code: 'UNAUTHORIZED' }))).toEqual(['error must not be empty']);
  });

  test('the 500 body is {error, requestId} and never carries a code or a stack', () => {
    expect(validateResponse('getMe', 500, { error: 'Internal error.', requestId: 'req-1' })).toEqual([]);
    expect(messages(validateResponse('getMe', 500, { error: 'Internal error.', requestId: 'r', code: 'INTERNAL' }))).toContain(
      'a 500 body carries no code and no stack',
    );
    expect(messages(validateResponse('getMe', 500, { error: 'Internal error.', requestId: 'r', stack: 'at x' }))).toContain(
      'a 500 body carries no code and no stack',
    );
    expect(messages(validateResponse('getMe', 500, { error: 'Internal error.' }))).toEqual(['requestId is required']);
  });
});

const section8 = {
  'x-request-id': 'req-1',
  'x-svc-api-version': API_VERSION,
  'x-ratelimit-limit': '600',
  'x-ratelimit-remaining': '599',
  'x-ratelimit-reset': '1767225600',
};

describe('validateResponseHeaders', () => {
  test('accepts the section-8 headers, in any letter case', () => {
    expect(validateResponseHeaders('getMe', 200, section8)).toEqual([]);
    const upper = Object.fromEntries(Object.entries(section8).map(([name, value]) => [name.toUpperCase(), value]));
    expect(validateResponseHeaders('getMe', 403, upper)).toEqual([]);
  });

  test.each(Object.keys(section8))('requires %s on success and on failure', (name) => {
    const headers: Record<string, string | undefined> = { ...section8, [name]: undefined };
    expect(validateResponseHeaders('listProjects', 200, headers)).toHaveLength(1);
    expect(validateResponseHeaders('listProjects', 422, headers)).toHaveLength(1);
    expect(validateResponseHeaders('listProjects', 500, headers)).toHaveLength(1);
  });

  test.each([
    ['x-svc-api-version', '9.9.9', `header X-Svc-Api-Version must be "${API_VERSION}"`],
    ['x-request-id', 'has space', 'header X-Request-Id must be 1 to 128 of A-Z a-z 0-9 . _ -'],
    ['x-request-id', 'x'.repeat(129), 'header X-Request-Id must be 1 to 128 of A-Z a-z 0-9 . _ -'],
    ['x-ratelimit-reset', 'soon', 'header X-RateLimit-Reset must be digits'],
    ['x-ratelimit-limit', '-1', 'header X-RateLimit-Limit must be digits'],
  ])('%s: %s is refused', (name, value, message) => {
    expect(messages(validateResponseHeaders('getMe', 200, { ...section8, [name]: value }))).toEqual([message]);
  });

  test('a 429 answers with no budget left', () => {
    expect(validateResponseHeaders('getMe', 429, { ...section8, 'x-ratelimit-remaining': '0' })).toEqual([]);
    expect(messages(validateResponseHeaders('getMe', 429, section8))).toEqual(['header X-RateLimit-Remaining must be "0"']);
  });

  test('ETag on a work item read and update, Location on a created folder', () => {
    expect(messages(validateResponseHeaders('getWorkItem', 200, section8))).toEqual(['missing header ETag']);
    expect(messages(validateResponseHeaders('updateWorkItem', 200, section8))).toEqual(['missing header ETag']);
    expect(validateResponseHeaders('getWorkItem', 200, { ...section8, etag: '"v3"' })).toEqual([]);
    expect(messages(validateResponseHeaders('createFolder', 201, section8))).toEqual(['missing header Location']);
    expect(validateResponseHeaders('createFolder', 201, { ...section8, location: '/api/v1/folders/f1' })).toEqual([]);
    // An error answer needs no ETag.
    expect(validateResponseHeaders('getWorkItem', 404, section8)).toEqual([]);
  });

  test('a header sent twice, and an undocumented status, are issues', () => {
    expect(messages(validateResponseHeaders('getMe', 200, { ...section8, 'x-request-id': ['a', 'b'] }))).toEqual(['header X-Request-Id must appear once']);
    expect(messages(validateResponseHeaders('getMe', 201, section8))).toEqual(['status 201 is not documented for getMe']);
  });
});
