// The document is structurally sound OpenAPI 3.1 and covers exactly the contract's operations.
// No official OpenAPI 3.1 meta-schema is installed, so the structural rules that matter here are
// written out below (a subset of the OpenAPI 3.1 schema) and every embedded JSON Schema is checked
// against the draft 2020-12 meta-schema that ajv ships.
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, test } from 'vitest';
import { openapiDocument, SECTION_8_HEADERS } from '../../src/contract/openapi.js';
import { OPERATIONS, API_PREFIX } from '../../src/contract/operations.js';
import { API_VERSION } from '../../src/contract/types.js';

type Json = Record<string, unknown>;
const doc = JSON.parse(JSON.stringify(openapiDocument)) as Json;
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

function resolvePointer(pointer: string): unknown {
  if (!pointer.startsWith('#/')) throw new Error(`not a local ref: ${pointer}`);
  return pointer
    .slice(2)
    .split('/')
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<unknown>((node, segment) => (node as Json | undefined)?.[segment], doc);
}

/** Follows one $ref, as OpenAPI allows on responses, parameters and headers. */
const deref = (node: Json): Json => (typeof node.$ref === 'string' ? (resolvePointer(node.$ref) as Json) : node);

function collectRefs(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) node.forEach((child) => collectRefs(child, out));
  else if (node && typeof node === 'object') {
    for (const [name, child] of Object.entries(node)) {
      if (name === '$ref' && typeof child === 'string') out.push(child);
      else collectRefs(child, out);
    }
  }
  return out;
}

const operations = Object.entries(doc.paths as Record<string, Json>).flatMap(([path, item]) =>
  Object.entries(item)
    .filter(([method]) => METHODS.includes(method))
    .map(([method, operation]) => ({ path, method, operation: operation as Json })),
);

const structure = {
  type: 'object',
  required: ['openapi', 'info', 'paths', 'components'],
  properties: {
    openapi: { const: '3.1.0' },
    info: { type: 'object', required: ['title', 'version'], properties: { title: { type: 'string' }, version: { type: 'string' } } },
    servers: { type: 'array', items: { type: 'object', required: ['url'] } },
    paths: {
      type: 'object',
      propertyNames: { pattern: '^/' },
      additionalProperties: {
        type: 'object',
        propertyNames: { enum: [...METHODS, 'summary', 'description', 'parameters', 'servers'] },
        additionalProperties: { $ref: '#/$defs/operation' },
      },
    },
    components: {
      type: 'object',
      properties: {
        schemas: { type: 'object', additionalProperties: { type: ['object', 'boolean'] } },
        responses: { type: 'object', additionalProperties: { $ref: '#/$defs/response' } },
        parameters: { type: 'object', additionalProperties: { $ref: '#/$defs/parameter' } },
        headers: { type: 'object', additionalProperties: { $ref: '#/$defs/header' } },
        securitySchemes: { type: 'object', additionalProperties: { type: 'object', required: ['type'] } },
      },
    },
  },
  $defs: {
    ref: { type: 'object', required: ['$ref'], properties: { $ref: { type: 'string' } } },
    operation: {
      type: 'object',
      required: ['operationId', 'responses'],
      properties: {
        operationId: { type: 'string' },
        parameters: { type: 'array', items: { anyOf: [{ $ref: '#/$defs/ref' }, { $ref: '#/$defs/parameter' }] } },
        requestBody: { type: 'object', required: ['content'], properties: { content: { $ref: '#/$defs/content' }, required: { type: 'boolean' } } },
        responses: {
          type: 'object',
          minProperties: 1,
          propertyNames: { pattern: '^([1-5][0-9]{2}|default)$' },
          additionalProperties: { anyOf: [{ $ref: '#/$defs/ref' }, { $ref: '#/$defs/response' }] },
        },
      },
    },
    parameter: {
      type: 'object',
      required: ['name', 'in', 'schema'],
      properties: { name: { type: 'string' }, in: { enum: ['query', 'header', 'path', 'cookie'] }, required: { type: 'boolean' } },
      // OpenAPI: a path parameter must be required.
      if: { properties: { in: { const: 'path' } } },
      then: { required: ['required'], properties: { required: { const: true } } },
    },
    response: {
      type: 'object',
      required: ['description'],
      properties: {
        description: { type: 'string', minLength: 1 },
        headers: { type: 'object', additionalProperties: { anyOf: [{ $ref: '#/$defs/ref' }, { $ref: '#/$defs/header' }] } },
        content: { $ref: '#/$defs/content' },
      },
    },
    // A header object must not carry name or in.
    header: { type: 'object', required: ['schema'], not: { anyOf: [{ required: ['name'] }, { required: ['in'] }] } },
    content: { type: 'object', additionalProperties: { type: 'object', required: ['schema'] } },
  },
};

describe('the OpenAPI document', () => {
  test('is JSON-serialisable without loss', () => {
    expect(doc).toEqual(openapiDocument);
  });

  test('follows the structural rules of OpenAPI 3.1', () => {
    const validate = new Ajv2020({ strict: false, allErrors: true }).compile(structure);
    expect(validate(doc) ? [] : validate.errors).toEqual([]);
  });

  test('carries the contract version and the /api/v1 prefix', () => {
    expect((doc.info as Json).version).toBe(API_VERSION);
    expect((doc.info as Json)['x-operation-count']).toBe(31);
    expect(doc.servers).toEqual([{ url: API_PREFIX }]);
  });

  test('has all 31 operations exactly once, with method, path, number and permission', () => {
    expect(OPERATIONS).toHaveLength(31);
    expect(operations).toHaveLength(OPERATIONS.length);
    for (const op of OPERATIONS) {
      const found = operations.filter(({ operation }) => operation.operationId === op.id);
      expect(found, op.id).toHaveLength(1);
      expect(found[0]).toMatchObject({ path: op.path, method: op.method.toLowerCase() });
      expect(found[0]?.operation).toMatchObject({ 'x-operation-number': op.n, 'x-permission': op.permission });
    }
  });

  test('every $ref resolves', () => {
    const refs = collectRefs(doc);
    expect(refs.length).toBeGreaterThan(100);
    expect(refs.filter((target) => resolvePointer(target) === undefined)).toEqual([]);
  });

  test('every embedded JSON Schema is valid draft 2020-12', () => {
    const ajv = new Ajv2020({ strict: false });
    const components = doc.components as Record<string, Record<string, Json>>;
    const schemas: [string, unknown][] = [
      ...Object.entries(components.schemas ?? {}),
      ...Object.entries(components.parameters ?? {}).map(([name, p]) => [`parameter ${name}`, p.schema] as [string, unknown]),
      ...Object.entries(components.headers ?? {}).map(([name, h]) => [`header ${name}`, h.schema] as [string, unknown]),
    ];
    for (const [name, schema] of schemas) expect(ajv.validateSchema(schema as Json), name).toBe(true);
  });

  test.each(OPERATIONS.map((op) => [op.id, op] as const))('%s documents 401, 403, 429 and 500', (_id, op) => {
    const responses = operations.find(({ operation }) => operation.operationId === op.id)?.operation.responses as Json;
    for (const status of ['401', '403', '429', '500']) expect(Object.keys(responses)).toContain(status);
  });

  test.each(OPERATIONS.map((op) => [op.id, op] as const))('%s: every response carries the section-8 headers', (_id, op) => {
    const responses = operations.find(({ operation }) => operation.operationId === op.id)?.operation.responses as Record<string, Json>;
    for (const [status, response] of Object.entries(responses)) {
      const headers = deref(response).headers as Record<string, Json>;
      for (const name of SECTION_8_HEADERS) expect(deref(headers[name] as Json), `${status} ${name}`).toMatchObject({ required: true });
    }
  });

  test('error bodies: {error, code} everywhere but 500, whose body has no code', () => {
    const responses = (doc.components as Record<string, Record<string, Json>>).responses ?? {};
    for (const [name, response] of Object.entries(responses)) {
      const schema = ((response.content as Json)['application/json'] as Json).schema as Json;
      const body = JSON.stringify(schema);
      if (name === 'Error500') expect(schema).toEqual({ $ref: '#/components/schemas/InternalErrorBody' });
      else expect(body, name).toContain('#/components/schemas/ErrorBody');
    }
    const schemas = (doc.components as Record<string, Record<string, Json>>).schemas ?? {};
    expect(schemas.ErrorBody?.required).toEqual(['error', 'code']);
    expect(schemas.InternalErrorBody?.required).toEqual(['error', 'requestId']);
    expect(Object.keys(schemas.InternalErrorBody?.properties as Json)).not.toContain('code');
  });

  test('ETag on reading and updating a work item, Location on creating a folder', () => {
    const success = (id: string, status: string) =>
      ((operations.find(({ operation }) => operation.operationId === id)!.operation.responses as Record<string, Json>)[status]?.headers ?? {}) as Json;
    expect(Object.keys(success('getWorkItem', '200'))).toContain('ETag');
    expect(Object.keys(success('updateWorkItem', '200'))).toContain('ETag');
    expect(Object.keys(success('createFolder', '201'))).toContain('Location');
    expect(Object.keys(success('getFolder', '200'))).not.toContain('Location');
  });

  test.each(OPERATIONS.map((op) => [op.id, op] as const))('%s declares exactly its path parameters', (_id, op) => {
    const operation = operations.find(({ operation: o }) => o.operationId === op.id)?.operation as Json;
    const params = (operation.parameters as Json[]).map(deref);
    const inPath = params.filter((p) => p.in === 'path').map((p) => p.name);
    expect(inPath).toEqual([...op.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]));
  });

  test('paging parameters on the paged reads, If-Match on the update, ready-lane filters where they apply', () => {
    const names = (id: string) =>
      ((operations.find(({ operation }) => operation.operationId === id)?.operation.parameters as Json[]) ?? [])
        .map(deref)
        .filter((p) => p.in !== 'path')
        .map((p) => `${String(p.in)}:${String(p.name)}`);
    for (const id of ['listWorkspaces', 'listProjects', 'listWorkItems', 'listBacklog', 'listDesigns', 'listFolders', 'listReadyBugs', 'listReadyContainers']) {
      expect(names(id), id).toEqual(expect.arrayContaining(['query:cursor', 'query:limit']));
    }
    expect(names('updateWorkItem')).toEqual(['header:If-Match']);
    expect(names('listReadyBugs').sort()).toEqual(
      ['query:cursor', 'query:limit', 'query:kind', 'query:priority', 'query:assigneeId', 'query:ancestor', 'query:sprintId', 'query:allowSoftBlock'].sort(),
    );
    // kind, ancestor and allowSoftBlock are a 422 on the containers lane: not parameters of it.
    expect(names('listReadyContainers').sort()).toEqual(['query:assigneeId', 'query:cursor', 'query:limit', 'query:priority', 'query:sprintId']);
    const limit = deref((doc.components as Record<string, Record<string, Json>>).parameters?.limit as Json);
    expect(limit.schema).toMatchObject({ type: 'integer', minimum: 1, default: 50 });
    expect(limit.schema).not.toHaveProperty('maximum');
  });

  test('request bodies exactly where the contract takes one', () => {
    const withBody = operations.filter(({ operation }) => operation.requestBody).map(({ operation }) => operation.operationId);
    expect(withBody.sort()).toEqual(
      [
        'createWorkItem',
        'updateWorkItem',
        'moveToBacklog',
        'createFolder',
        'updateFolder',
        'openPlanSession',
        'addPlanTurn',
        'submitPlanSession',
        'openDispatchRun',
        'closeDispatchRun',
        'appendDispatchEvents',
      ].sort(),
    );
  });

  test('the statuses the contract spells out for single operations', () => {
    const statuses = (id: string) => Object.keys(operations.find(({ operation }) => operation.operationId === id)?.operation.responses as Json);
    expect(statuses('listWorkItems')).toEqual(['200', '401', '403', '404', '422', '429', '500']);
    expect(statuses('createWorkItem')).toEqual(['201', '401', '403', '404', '422', '429', '500']);
    expect(statuses('getWorkItem')).toEqual(['200', '401', '403', '404', '429', '500']);
    expect(statuses('updateFolder')).toEqual(['200', '401', '403', '404', '409', '422', '429', '500']);
    expect(statuses('deleteFolder')).toEqual(['200', '401', '403', '404', '409', '429', '500']);
    expect(statuses('addPlanTurn')).toEqual(['200', '401', '403', '404', '409', '422', '429', '500']);
    expect(statuses('openDispatchRun')).toEqual(['201', '401', '403', '404', '409', '422', '429', '500']);
    expect(statuses('submitPlanSession')).toEqual(expect.arrayContaining(['202', '402', '422', '503']));
    expect(statuses('updateWorkItem')).toEqual(expect.arrayContaining(['200', '404', '412']));
    expect(statuses('appendDispatchEvents')).toEqual(expect.arrayContaining(['200', '409', '413', '422']));
    expect(statuses('getGitCredential')).toEqual(expect.arrayContaining(['200', '409', '503']));
    expect(statuses('heartbeatDispatchRun')).toEqual(expect.arrayContaining(['204', '409']));
    expect(statuses('getMe')).toEqual(['200', '401', '403', '429', '500']);
  });

  // What the local service answers for a request body rests on these (src/server/app.ts): an
  // operation without a request body ignores one; an oversized body is 413 only where 413 is listed,
  // else 422 — so every operation that takes a body must list 422.
  test('request bodies and the statuses the service answers for them agree', () => {
    const byId = new Map(operations.map(({ operation }) => [operation.operationId as string, operation]));
    expect(byId.get('getGitCredential')?.requestBody).toBeUndefined();
    expect(byId.get('heartbeatDispatchRun')?.requestBody).toBeUndefined();
    const with413 = operations.filter(({ operation }) => (operation.responses as Json)['413']).map(({ operation }) => operation.operationId);
    expect(with413).toEqual(['appendDispatchEvents']);
    for (const { operation } of operations) {
      if (operation.requestBody) expect(Object.keys(operation.responses as Json), String(operation.operationId)).toContain('422');
    }
  });
});
