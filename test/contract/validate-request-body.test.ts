// validateRequestBody: every body rule of the contract, one row each, with the one-line message
// the local service turns into its 422.
import { describe, expect, test } from 'vitest';
import type { OperationId } from '../../src/contract/operations.js';
import { openapiDocument } from '../../src/contract/openapi.js';
import { FOLDER_NAME_PATTERN } from '../../src/contract/schemas-requests.js';
import { validateRequestBody } from '../../src/contract/validate.js';
import { folderUpdateSamples, requestSamples } from './samples.js';

type Json = Record<string, unknown>;
const item = { kind: 'story', title: 'A story' };
const run = { projectKey: 'APP', command: 'run' };
const event = (extra: Record<string, unknown> = {}) => ({ workItemKey: 'APP-1', ...extra });
const events = (count: number) => ({ events: Array.from({ length: count }, () => event()) });

// [operation, what, body, the issue's path, the issue's message]
const INVALID: [OperationId, string, unknown, string, string][] = [
  ['createWorkItem', 'an unknown property', { ...item, foo: 1 }, 'foo', "unknown property 'foo'"],
  ['createWorkItem', 'status is not a create field', { ...item, status: 'done' }, 'status', "unknown property 'status'"],
  ['createWorkItem', 'no kind', { title: 'x' }, 'kind', 'kind is required'],
  ['createWorkItem', 'no title', { kind: 'task' }, 'title', 'title is required'],
  ['createWorkItem', 'an empty title', { ...item, title: '' }, 'title', 'title must not be empty'],
  ['createWorkItem', 'an unknown kind', { ...item, kind: 'saga' }, 'kind', 'kind must be one of epic, story, task, subtask, bug'],
  ['createWorkItem', 'an unknown priority', { ...item, priority: 'urgent' }, 'priority', 'priority must be one of lowest, low, medium, high, highest'],
  [
    'createWorkItem',
    'an unknown type',
    { ...item, type: 'poem' },
    'type',
    'type must be one of code, design, test, content, copy, translate, research, review, verification, decision, deploy, manual, legal, chore, null',
  ],
  ['createWorkItem', 'an unknown executor', { ...item, executor: 'robot' }, 'executor', 'executor must be one of coding_agent, human, null'],
  ['createWorkItem', 'negative storyPoints', { ...item, storyPoints: -0.01 }, 'storyPoints', 'storyPoints must be >= 0'],
  ['createWorkItem', 'storyPoints above 9999.99', { ...item, storyPoints: 10000 }, 'storyPoints', 'storyPoints must be <= 9999.99'],
  ['createWorkItem', 'storyPoints as text', { ...item, storyPoints: '3' }, 'storyPoints', 'storyPoints must be number or null'],
  ['createWorkItem', 'fractional estimateMinutes', { ...item, estimateMinutes: 1.5 }, 'estimateMinutes', 'estimateMinutes must be integer or null'],
  ['createWorkItem', 'negative estimateMinutes', { ...item, estimateMinutes: -1 }, 'estimateMinutes', 'estimateMinutes must be >= 0'],
  ['createWorkItem', 'estimateMinutes past 2^53-1', { ...item, estimateMinutes: 2 ** 53 }, 'estimateMinutes', 'estimateMinutes must be <= 9007199254740991'],
  ['createWorkItem', 'dueDate without Z', { ...item, dueDate: '2026-01-01T00:00:00' }, 'dueDate', 'dueDate must be a UTC date-time ending in Z'],
  ['createWorkItem', 'dueDate with an offset', { ...item, dueDate: '2026-01-01T00:00:00+00:00' }, 'dueDate', 'dueDate must be a UTC date-time ending in Z'],
  ['createWorkItem', 'dueDate as a bare date', { ...item, dueDate: '2026-01-01' }, 'dueDate', 'dueDate must be a UTC date-time ending in Z'],
  ['createWorkItem', 'dueDate in month 13', { ...item, dueDate: '2026-13-01T00:00:00Z' }, 'dueDate', 'dueDate must be a UTC date-time ending in Z'],
  ['createWorkItem', 'dueDate on February 30', { ...item, dueDate: '2025-02-30T00:00:00Z' }, 'dueDate', 'dueDate must be a UTC date-time ending in Z'],
  [
    'createWorkItem',
    'dueDate on February 29 of a common year',
    { ...item, dueDate: '2025-02-29T00:00Z' },
    'dueDate',
    'dueDate must be a UTC date-time ending in Z',
  ],
  ['createWorkItem', 'a malformed parentKey', { ...item, parentKey: 'app-1' }, 'parentKey', 'parentKey must be a work item key like ABC-123'],
  ['createWorkItem', 'targetRepos not an array', { ...item, targetRepos: 'acme/app' }, 'targetRepos', 'targetRepos must be array'],
  ['createWorkItem', 'targetRepositories of objects', { ...item, targetRepositories: [{}] }, 'targetRepositories[0]', 'targetRepositories[0] must be string'],
  ['createWorkItem', 'a body that is not an object', ['story'], '', 'body must be object'],
  ['createWorkItem', 'no body at all', undefined, '', 'a JSON body is required'],
  ['updateWorkItem', 'an unknown property', { colour: 'red' }, 'colour', "unknown property 'colour'"],
  ['updateWorkItem', 'explanationMd not text', { explanationMd: 5 }, 'explanationMd', 'explanationMd must be string or null'],
  ['updateWorkItem', 'title cleared to empty', { title: '' }, 'title', 'title must not be empty'],
  ['updateWorkItem', 'kind set to null (not nullable)', { kind: null }, 'kind', 'kind must be string'],
  ['updateWorkItem', 'storyPoints above range', { storyPoints: 9999.991 }, 'storyPoints', 'storyPoints must be <= 9999.99'],
  ['moveToBacklog', 'no workItemKeys', {}, 'workItemKeys', 'workItemKeys is required'],
  ['moveToBacklog', 'a malformed key', { workItemKeys: ['APP-1', 'nope'] }, 'workItemKeys[1]', 'workItemKeys[1] must be a work item key like ABC-123'],
  ['createFolder', 'no name', { parentFolderId: null }, 'name', 'name is required'],
  ['createFolder', 'a name that is not text', { name: 7 }, 'name', 'name must be string'],
  ['createFolder', 'an unknown property', { name: 'a', position: 'z' }, 'position', "unknown property 'position'"],
  [
    'updateFolder',
    'a rename and a placement together',
    { name: 'a', afterId: 'f1' },
    '',
    'a rename (name) cannot be combined with a placement (parentFolderId, beforeId, afterId)',
  ],
  ['updateFolder', 'a rename to null', { name: null }, 'name', 'name must be string'],
  ['updateFolder', 'an unknown property', { parentFolderId: null, ifMatch: 'x' }, 'ifMatch', "unknown property 'ifMatch'"],
  ['openPlanSession', 'targetKeys not an array', { targetKeys: 'APP-1' }, 'targetKeys', 'targetKeys must be array'],
  ['openPlanSession', 'an unknown property', { projectKey: 'APP' }, 'projectKey', "unknown property 'projectKey'"],
  ['addPlanTurn', 'no turn body', { sessionId: 's1' }, 'body', 'body is required'],
  ['submitPlanSession', 'an unknown property', { turns: [] }, 'turns', "unknown property 'turns'"],
  ['openDispatchRun', 'no projectKey', { command: 'run' }, 'projectKey', 'projectKey is required'],
  [
    'openDispatchRun',
    'an unknown command',
    { ...run, command: 'go' },
    'command',
    'command must be one of next, run, run_scope, batch, auto, fix, continue, review',
  ],
  ['openDispatchRun', 'origin instance (run records only)', { ...run, origin: 'instance' }, 'origin', 'origin must be one of local, hosted'],
  [
    'openDispatchRun',
    'an unknown card field',
    { ...run, cards: [{ workItemKey: 'APP-1', reason: 'x' }] },
    'cards[0].reason',
    "unknown property 'cards[0].reason'",
  ],
  ['openDispatchRun', 'a card without its key', { ...run, cards: [{ skipReason: 'x' }] }, 'cards[0].workItemKey', 'cards[0].workItemKey is required'],
  ['closeDispatchRun', 'no stopReason', { status: 'failed' }, 'stopReason', 'stopReason is required'],
  [
    'closeDispatchRun',
    'an unknown stopReason',
    { stopReason: 'bored' },
    'stopReason',
    'stopReason must be one of drained, completed, max, halted, interrupted, replanned, gated, abandoned',
  ],
  [
    'closeDispatchRun',
    'closing to running',
    { stopReason: 'completed', status: 'running' },
    'status',
    'status must be one of succeeded, failed, cancelled, timed_out',
  ],
  ['appendDispatchEvents', 'no events', {}, 'events', 'events is required'],
  ['appendDispatchEvents', '201 events', events(201), 'events', 'events must have at most 200 items'],
  ['appendDispatchEvents', 'an unknown event field', { events: [event({ kind: 'log' })] }, 'events[0].kind', "unknown property 'events[0].kind'"],
  [
    'appendDispatchEvents',
    'an unknown disposition',
    { events: [event(), event({ disposition: 'done' })] },
    'events[1].disposition',
    'events[1].disposition must be one of queued, running, implemented, failed, skipped, not_reached',
  ],
  ['appendDispatchEvents', 'a fractional exitCode', { events: [event({ exitCode: 1.5 })] }, 'events[0].exitCode', 'events[0].exitCode must be integer'],
  [
    'appendDispatchEvents',
    'a body of 16,385 characters',
    { events: [event({ body: 'x'.repeat(16_385) })] },
    'events[0].body',
    'events[0].body must be at most 16384 characters',
  ],
];

const VALID: [OperationId, string, unknown][] = [
  ['createWorkItem', 'the smallest create', item],
  ['createWorkItem', 'every field, at the edges of their ranges', requestSamples.WorkItemCreate],
  ['createWorkItem', 'dueDate without seconds, and with fractions', { ...item, dueDate: '2026-01-01T10:00Z' }],
  [
    'createWorkItem',
    'nullable fields set to null',
    { ...item, type: null, executor: null, storyPoints: null, estimateMinutes: null, dueDate: null, parentKey: null },
  ],
  ['updateWorkItem', 'an empty update', {}],
  ['updateWorkItem', 'every field', requestSamples.WorkItemUpdate],
  ['moveToBacklog', 'an empty batch (a no-op)', { workItemKeys: [] }],
  ['createFolder', 'a name padded to more than 120 characters, 120 once trimmed', { name: ` ${'x'.repeat(120)} ` }],
  ['updateFolder', 'a rename', folderUpdateSamples.rename],
  ['updateFolder', 'a placement', folderUpdateSamples.placement],
  ['openPlanSession', 'no body (the project-wide thread)', undefined],
  ['openPlanSession', 'an anchor set', { targetKeys: ['APP-2', 'APP-1', 'APP-1'] }],
  ['submitPlanSession', 'no body', undefined],
  ['addPlanTurn', 'a turn', { body: 'Split APP-1' }],
  ['openDispatchRun', 'the smallest open', run],
  ['openDispatchRun', 'every field', requestSamples.DispatchRunOpen],
  ['closeDispatchRun', 'a close with an explicit status', { stopReason: 'interrupted', status: 'cancelled' }],
  ['appendDispatchEvents', 'exactly 200 events', events(200)],
  ['appendDispatchEvents', 'a run-scoped event', { events: [{ body: 'x'.repeat(16_384) }] }],
  // The byte limit (16,384 bytes of UTF-8) is the server's check: 6,000 euro signs are 18,000 bytes.
  ['appendDispatchEvents', 'multi-byte text within 16,384 characters', { events: [{ body: '€'.repeat(6_000) }] }],
  ['getGitCredential', 'an operation without a body', { anything: true }],
  ['heartbeatDispatchRun', 'an operation without a body', undefined],
];

// The contract answers these with INVALID_FOLDER_NAME, which only the folder module can say: the
// document states the rule (a pattern), the request check leaves it to the module.
const LEFT_TO_THE_MODULE: [OperationId, string, unknown][] = [
  ['createFolder', 'a blank name', { name: '   ' }],
  ['createFolder', 'a 121-character name', { name: 'x'.repeat(121) }],
  ['updateFolder', 'an empty rename', { name: '' }],
];

describe('validateRequestBody', () => {
  test.each(INVALID)('%s refuses %s', (operationId, _what, body, path, message) => {
    const issues = validateRequestBody(operationId, body);
    expect(issues[0]).toEqual({ path, message });
  });

  test.each(VALID)('%s accepts %s', (operationId, _what, body) => {
    expect(validateRequestBody(operationId, body)).toEqual([]);
  });

  test.each(LEFT_TO_THE_MODULE)('%s leaves %s to the folder module (INVALID_FOLDER_NAME)', (operationId, _what, body) => {
    expect(validateRequestBody(operationId, body)).toEqual([]);
    const schema = operationId === 'createFolder' ? 'FolderCreate' : 'FolderUpdate';
    const nameRule = (openapiDocument.components.schemas as Record<string, { properties: Record<string, Json> }>)[schema]?.properties.name;
    expect(nameRule).toMatchObject({ 'x-error-code': 'INVALID_FOLDER_NAME' });
    expect(new RegExp(String(nameRule?.pattern), 'u').test((body as { name: string }).name)).toBe(false);
  });

  test.each([
    ['a', true],
    ['  a  ', true],
    ['x'.repeat(120), true],
    [`\t${'x'.repeat(120)}\n`, true],
    ['a b', true],
    ['', false],
    [' \t\n', false],
    ['x'.repeat(121), false],
    [` ${'x'.repeat(119)} y `, false],
  ])('the folder name rule (1 to 120 characters once trimmed) on %j: %s', (name, ok) => {
    expect(new RegExp(FOLDER_NAME_PATTERN, 'u').test(name)).toBe(ok);
    expect(new RegExp(FOLDER_NAME_PATTERN, 'u').test(name)).toBe(name.trim().length >= 1 && name.trim().length <= 120);
  });

  test('reports every problem of a body, each once', () => {
    const issues = validateRequestBody('createWorkItem', { kind: 'saga', title: '', storyPoints: -1, extra: 1 });
    expect(issues.map((issue) => issue.path).sort()).toEqual(['extra', 'kind', 'storyPoints', 'title']);
  });

  test('is fast enough to run on every request once compiled', () => {
    validateRequestBody('createWorkItem', item);
    const started = performance.now();
    for (let i = 0; i < 10_000; i++) validateRequestBody('createWorkItem', requestSamples.WorkItemCreate);
    // Measured near 5 µs a call; the bound only catches a validator recompiled per call.
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});
