// The document says what api-v1 says (../shared/api-v1.md is the law): every enum's values in the
// contract's order, the local service's own enums (docs/service.md), which
// fields are required, and the key pattern. The wire types are derived from the same schemas
// (src/contract/types.ts), so what holds for the document holds for them.
import { describe, expect, test } from 'vitest';
import { openapiDocument } from '../../src/contract/openapi.js';
import {
  ACCESS_LEVELS,
  ACCESS_MODES,
  CLOSE_STATUSES,
  DELIVERY_CI,
  DELIVERY_STATES,
  DISPATCH_COMMANDS,
  DISPOSITIONS,
  ERROR_CODES,
  EXECUTORS,
  IMPLEMENTATION_SOURCES,
  KEY_PATTERN,
  KINDS,
  OPEN_ORIGINS,
  PLAN_ORIGINS,
  PLAN_STATUSES,
  PLANNING_SOURCES,
  PRIORITIES,
  PROPOSAL_OPS,
  RUN_STATUSES,
  SCOPES,
  STATUS_CATEGORIES,
  STOP_REASONS,
  WORK_TYPES,
} from '../../src/contract/types.js';

type Json = Record<string, unknown>;
const schemas = openapiDocument.components.schemas as Record<string, Json>;

const deref = (schema: Json): Json => (typeof schema.$ref === 'string' ? deref(schemas[schema.$ref.replace('#/components/schemas/', '')] as Json) : schema);

describe('required fields', () => {
  test("the required fields are the contract's: everything but the additive and optional ones", () => {
    const required = (name: string) => ((schemas[name]?.required ?? []) as string[]).slice().sort();
    const optional = (name: string, ...names: string[]) =>
      Object.keys(schemas[name]?.properties as Json)
        .filter((n) => !names.includes(n))
        .sort();
    expect(required('WorkItemSummary')).toEqual(optional('WorkItemSummary', 'statusCategory'));
    expect(required('WorkItemDetail')).toEqual(optional('WorkItemDetail', 'statusCategory'));
    expect(required('DispatchRun')).toEqual(optional('DispatchRun', 'continues', 'repair'));
    expect(required('WorkItemCreate')).toEqual(['kind', 'title']);
    expect(required('WorkItemUpdate')).toEqual([]);
    expect(required('DispatchRunOpen')).toEqual(['command', 'projectKey']);
    expect(required('DispatchRunClose')).toEqual(['stopReason']);
    expect(required('PlanTurnInput')).toEqual(['body']);
    expect(required('FolderCreate')).toEqual(['name']);
  });
});

const enumAt = (schemaName: string, ...path: string[]): unknown[] => {
  let node = deref(schemas[schemaName] as Json);
  for (const step of path) node = deref((step === 'items' ? node.items : (node.properties as Json)[step]) as Json);
  return node.enum as unknown[];
};
const withoutNull = (values: unknown[]) => values.filter((value) => value !== null);

// [what, values as the contract's fields lists them, the array in types.ts the schemas are built from, the document's enums]
const ENUMS: [string, string[], readonly string[], unknown[][]][] = [
  [
    'kind',
    ['epic', 'story', 'task', 'subtask', 'bug'],
    KINDS,
    [enumAt('WorkItemSummary', 'kind'), enumAt('LinkItem', 'kind'), enumAt('WorkItemCreate', 'kind')],
  ],
  ['priority', ['lowest', 'low', 'medium', 'high', 'highest'], PRIORITIES, [enumAt('WorkItemSummary', 'priority'), enumAt('WorkItemCreate', 'priority')]],
  [
    'type',
    ['code', 'design', 'test', 'content', 'copy', 'translate', 'research', 'review', 'verification', 'decision', 'deploy', 'manual', 'legal', 'chore'],
    WORK_TYPES,
    [withoutNull(enumAt('WorkItemSummary', 'type')), withoutNull(enumAt('WorkItemCreate', 'type'))],
  ],
  ['executor', ['coding_agent', 'human'], EXECUTORS, [withoutNull(enumAt('WorkItemDetail', 'executor')), withoutNull(enumAt('WorkItemCreate', 'executor'))]],
  ['planningSource', ['native', 'mcp', 'manual', 'api'], PLANNING_SOURCES, [withoutNull(enumAt('WorkItemDetail', 'planningSource'))]],
  ['implementationSource', ['hosted', 'byok', 'manual'], IMPLEMENTATION_SOURCES, [withoutNull(enumAt('WorkItemDetail', 'implementationSource'))]],
  ['delivery state', ['open', 'merged', 'closed'], DELIVERY_STATES, [enumAt('Delivery', 'state')]],
  ['delivery ci', ['passing', 'failing', 'running'], DELIVERY_CI, [withoutNull(enumAt('Delivery', 'ci'))]],
  [
    'dispatch command',
    ['next', 'run', 'run_scope', 'batch', 'auto', 'fix', 'continue', 'review'],
    DISPATCH_COMMANDS,
    [enumAt('DispatchRun', 'command'), enumAt('DispatchRunOpen', 'command')],
  ],
  [
    'stopReason',
    ['drained', 'completed', 'max', 'halted', 'interrupted', 'replanned', 'gated', 'abandoned'],
    STOP_REASONS,
    [withoutNull(enumAt('DispatchRun', 'stopReason')), enumAt('DispatchRunClose', 'stopReason')],
  ],
  ['run status', ['running', 'succeeded', 'failed', 'cancelled', 'timed_out'], RUN_STATUSES, [enumAt('DispatchRun', 'status')]],
  ['close status (closeDispatchRun)', ['succeeded', 'failed', 'cancelled', 'timed_out'], CLOSE_STATUSES, [enumAt('DispatchRunClose', 'status')]],
  ['origin (open request)', ['local', 'hosted'], OPEN_ORIGINS, [enumAt('DispatchRunOpen', 'origin')]],
  ['origin (run record)', ['local', 'hosted', 'instance'], [...OPEN_ORIGINS, 'instance'], [enumAt('DispatchRun', 'origin')]],
  ['plan status', ['generating', 'planned', 'stale', 'approved', 'declined'], PLAN_STATUSES, [enumAt('Plan', 'status'), enumAt('PlanStatusView', 'status')]],
  ['plan origin', ['user', 'cadence'], PLAN_ORIGINS, [enumAt('Plan', 'origin'), enumAt('PlanStatusView', 'origin')]],
  ['accessMode', ['workspace', 'members', 'public'], ACCESS_MODES, [enumAt('Project', 'accessMode')]],
  ['proposal op', ['add', 'modify', 'remove'], PROPOSAL_OPS, [enumAt('PlanProposal', 'op')]],
  ['permission', ['project:browse', 'work_item:edit', 'sprint:manage', 'ai:plan'], SCOPES, [enumAt('Identity', 'permissions', 'items')]],
];

describe('enums: the contract, types.ts and the document agree', () => {
  test.each(ENUMS)('%s', (_what, contract, fromTypes, inDocument) => {
    expect([...fromTypes]).toEqual(contract);
    for (const values of inDocument) expect(values).toEqual(contract);
  });

  test('accessLevel: the document leaves out `limited`, which is never emitted', () => {
    expect([...ACCESS_LEVELS]).toEqual(['open', 'limited', 'private', 'public']);
    expect(enumAt('Project', 'accessLevel')).toEqual(ACCESS_LEVELS.filter((level) => level !== 'limited'));
  });

  test("local-service enums (docs/service.md) are the document's", () => {
    expect(enumAt('DispatchCard', 'disposition')).toEqual([...DISPOSITIONS]);
    expect(enumAt('DispatchEventInput', 'disposition')).toEqual([...DISPOSITIONS]);
    expect(enumAt('WorkItemSummary', 'statusCategory')).toEqual([...STATUS_CATEGORIES]);
    expect(enumAt('ErrorBody', 'code')).toEqual(Object.keys(ERROR_CODES));
    // The contract's named codes are all there.
    expect(Object.keys(ERROR_CODES)).toEqual(
      expect.arrayContaining([
        'INVALID_REQUEST',
        'FOLDER_NAME_TAKEN',
        'INVALID_FOLDER_NAME',
        'CROSS_PROJECT_FOLDER',
        'FOLDER_CYCLE',
        'FOLDER_NOT_FOUND',
        'SUBTASK_NEEDS_PLACEMENT',
        'NO_RUN_TARGET',
      ]),
    );
  });

  test("the key pattern is the contract's and the document's", () => {
    expect(KEY_PATTERN.source).toBe('^[A-Z][A-Z0-9]*-[0-9]+$');
    expect((deref(schemas.WorkItemSummary as Json).properties as Record<string, Json>).key?.pattern).toBe(KEY_PATTERN.source);
  });
});
