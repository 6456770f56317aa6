// types.ts and the OpenAPI document describe the same wire: every field on both sides (deeply),
// every sample valid against its schema, and the enum arrays equal to the document's and to the
// contract's own tables (api-v1 §2), so types.ts cannot drift from the contract either.
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, test } from 'vitest';
import { openapiDocument } from '../../src/contract/openapi.js';
import {
  ACCESS_LEVELS, ACCESS_MODES, CLOSE_STATUSES, DELIVERY_CI, DELIVERY_STATES, DISPATCH_COMMANDS, DISPOSITIONS,
  ERROR_CODES, EXECUTORS, IMPLEMENTATION_SOURCES, KEY_PATTERN, KINDS, OPEN_ORIGINS, PLAN_ORIGINS, PLAN_STATUSES,
  PLANNING_SOURCES, PRIORITIES, PROPOSAL_OPS, RUN_STATUSES, SCOPES, STATUS_CATEGORIES, STOP_REASONS, WORK_TYPES,
} from '../../src/contract/types.js';
import { folderUpdateSamples, requestSamples, resourceSamples } from './samples.js';

type Json = Record<string, unknown>;
const DOC_ID = 'https://svc.local/test/openapi.json';
const schemas = openapiDocument.components.schemas as Record<string, Json>;
const ajv = new Ajv2020({ strict: false, allErrors: true });
ajv.addSchema(openapiDocument, DOC_ID);
const validatorOf = (name: string) => ajv.compile({ $ref: `${DOC_ID}#/components/schemas/${name}` });

const deref = (schema: Json): Json =>
  typeof schema.$ref === 'string' ? deref(schemas[schema.$ref.replace('#/components/schemas/', '')] as Json) : schema;

/** Field-set differences between a value and its schema, at every depth the schema describes. */
function fieldDiff(value: unknown, schemaIn: Json, at: string, out: string[] = []): string[] {
  const schema = deref(schemaIn);
  if (value === null || value === undefined) return out;
  const branches = (schema.anyOf ?? schema.oneOf) as Json[] | undefined;
  if (branches) {
    const objectBranch = branches.map(deref).find((branch) => branch.type !== 'null');
    return objectBranch ? fieldDiff(value, objectBranch, at, out) : out;
  }
  if (Array.isArray(value)) {
    if (schema.items) value.forEach((item, i) => fieldDiff(item, schema.items as Json, `${at}[${i}]`, out));
    return out;
  }
  if (typeof value === 'object' && schema.properties) {
    const declared = Object.keys(schema.properties as Json).sort();
    const present = Object.keys(value).sort();
    for (const name of present) if (!declared.includes(name)) out.push(`${at}.${name}: in types.ts, not in the document`);
    for (const name of declared) if (!present.includes(name)) out.push(`${at}.${name}: in the document, not in the sample`);
    for (const name of present.filter((n) => declared.includes(n))) {
      fieldDiff((value as Json)[name], (schema.properties as Record<string, Json>)[name] as Json, `${at}.${name}`, out);
    }
  }
  return out;
}

describe('types.ts matches the document', () => {
  const all = { ...resourceSamples, ...requestSamples };

  test('every component schema has a typed sample (Design rows have no type: the contract leaves them open)', () => {
    const missing = Object.keys(schemas).filter((name) => !(name in all) && name !== 'FolderUpdate');
    expect(missing).toEqual(['Design', 'DesignPage']);
  });

  test.each(Object.entries(all))('%s: the same fields on both sides', (name, sample) => {
    expect(fieldDiff(sample, { $ref: `#/components/schemas/${name}` }, name)).toEqual([]);
  });

  test.each(Object.entries(all))('%s: the sample is valid against the schema', (name, sample) => {
    const validate = validatorOf(name);
    expect(validate(sample) ? [] : validate.errors).toEqual([]);
  });

  test('FolderUpdate: the fields match, and a rename and a placement are each valid', () => {
    expect(fieldDiff(folderUpdateSamples.allKeys, { $ref: '#/components/schemas/FolderUpdate' }, 'FolderUpdate')).toEqual([]);
    const validate = validatorOf('FolderUpdate');
    expect(validate(folderUpdateSamples.rename)).toBe(true);
    expect(validate(folderUpdateSamples.placement)).toBe(true);
    expect(validate(folderUpdateSamples.allKeys)).toBe(false);
  });

  test('required fields are the non-optional ones of types.ts', () => {
    const required = (name: string) => (schemas[name]?.required as string[]).slice().sort();
    const optional = (name: string, ...names: string[]) =>
      Object.keys(schemas[name]?.properties as Json).filter((n) => !names.includes(n)).sort();
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

// [what, values as api-v1 §2 lists them, the array in types.ts, the document's enums]
const ENUMS: [string, string[], readonly string[], unknown[][]][] = [
  ['kind', ['epic', 'story', 'task', 'subtask', 'bug'], KINDS, [enumAt('WorkItemSummary', 'kind'), enumAt('LinkItem', 'kind'), enumAt('WorkItemCreate', 'kind')]],
  ['priority', ['lowest', 'low', 'medium', 'high', 'highest'], PRIORITIES, [enumAt('WorkItemSummary', 'priority'), enumAt('WorkItemCreate', 'priority')]],
  ['type', ['code', 'design', 'test', 'content', 'copy', 'translate', 'research', 'review', 'verification', 'decision', 'deploy', 'manual', 'legal', 'chore'], WORK_TYPES, [withoutNull(enumAt('WorkItemSummary', 'type')), withoutNull(enumAt('WorkItemCreate', 'type'))]],
  ['executor', ['coding_agent', 'human'], EXECUTORS, [withoutNull(enumAt('WorkItemDetail', 'executor')), withoutNull(enumAt('WorkItemCreate', 'executor'))]],
  ['planningSource', ['native', 'mcp', 'manual', 'api'], PLANNING_SOURCES, [withoutNull(enumAt('WorkItemDetail', 'planningSource'))]],
  ['implementationSource', ['hosted', 'byok', 'manual'], IMPLEMENTATION_SOURCES, [withoutNull(enumAt('WorkItemDetail', 'implementationSource'))]],
  ['delivery state', ['open', 'merged', 'closed'], DELIVERY_STATES, [enumAt('Delivery', 'state')]],
  ['delivery ci', ['passing', 'failing', 'running'], DELIVERY_CI, [withoutNull(enumAt('Delivery', 'ci'))]],
  ['dispatch command', ['next', 'run', 'run_scope', 'batch', 'auto', 'fix', 'continue', 'review'], DISPATCH_COMMANDS, [enumAt('DispatchRun', 'command'), enumAt('DispatchRunOpen', 'command')]],
  ['stopReason', ['drained', 'completed', 'max', 'halted', 'interrupted', 'replanned', 'gated', 'abandoned'], STOP_REASONS, [withoutNull(enumAt('DispatchRun', 'stopReason')), enumAt('DispatchRunClose', 'stopReason')]],
  ['run status', ['running', 'succeeded', 'failed', 'cancelled', 'timed_out'], RUN_STATUSES, [enumAt('DispatchRun', 'status')]],
  ['close status (§4 op 27)', ['succeeded', 'failed', 'cancelled', 'timed_out'], CLOSE_STATUSES, [enumAt('DispatchRunClose', 'status')]],
  ['origin (open request)', ['local', 'hosted'], OPEN_ORIGINS, [enumAt('DispatchRunOpen', 'origin')]],
  ['origin (run record)', ['local', 'hosted', 'instance'], [...OPEN_ORIGINS, 'instance'], [enumAt('DispatchRun', 'origin')]],
  ['plan status', ['generating', 'planned', 'stale', 'approved', 'declined'], PLAN_STATUSES, [enumAt('Plan', 'status'), enumAt('PlanStatusView', 'status')]],
  ['plan origin', ['user', 'cadence'], PLAN_ORIGINS, [enumAt('Plan', 'origin'), enumAt('PlanStatusView', 'origin')]],
  ['accessMode', ['workspace', 'members', 'public'], ACCESS_MODES, [enumAt('Project', 'accessMode')]],
  ['proposal op', ['add', 'modify', 'remove'], PROPOSAL_OPS, [enumAt('PlanProposal', 'op')]],
  ['permission (§5)', ['project:browse', 'work_item:edit', 'sprint:manage', 'ai:plan'], SCOPES, [enumAt('Identity', 'permissions', 'items')]],
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

  test('local-service enums (DISPATCH.md §7, docs/service.md) are the document\'s', () => {
    expect(enumAt('DispatchCard', 'disposition')).toEqual([...DISPOSITIONS]);
    expect(enumAt('DispatchEventInput', 'disposition')).toEqual([...DISPOSITIONS]);
    expect(enumAt('WorkItemSummary', 'statusCategory')).toEqual([...STATUS_CATEGORIES]);
    expect(enumAt('ErrorBody', 'code')).toEqual(Object.keys(ERROR_CODES));
    // The contract's named codes are all there.
    expect(Object.keys(ERROR_CODES)).toEqual(expect.arrayContaining([
      'INVALID_REQUEST', 'FOLDER_NAME_TAKEN', 'INVALID_FOLDER_NAME', 'CROSS_PROJECT_FOLDER', 'FOLDER_CYCLE',
      'FOLDER_NOT_FOUND', 'SUBTASK_NEEDS_PLACEMENT', 'NO_RUN_TARGET',
    ]));
  });

  test('the key pattern is the contract\'s and the document\'s', () => {
    expect(KEY_PATTERN.source).toBe('^[A-Z][A-Z0-9]*-[0-9]+$');
    expect((deref(schemas.WorkItemSummary as Json).properties as Record<string, Json>).key?.pattern).toBe(KEY_PATTERN.source);
  });
});
