// The commands over listBacklog, moveToBacklog, listDesigns, listFolders, createFolder, getFolder, updateFolder, deleteFolder, openPlanSession, addPlanTurn, submitPlanSession, getPlan, getPlanStatus (folders, backlog, designs, plan), as a user types them (the
// command line run in-process) against `svc server --seed demo` (run in the test's process). What the seed lacks
// (designs, filed items, ranks, credits) is written into the server's database from here, through
// the local service's own admin functions. Every --json document is checked against the contract's
// OpenAPI components, as test/cli/json-shapes.test.ts does for the other commands. A few tests call the
// handlers directly for what a pipe cannot show (the TTY table) and the flag-to-body mapping of `folders move`.
import { Ajv2020, type ErrorObject } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { placementOf } from '../../src/commands/folders/move.js';
import { runFoldersCreate } from '../../src/commands/folders/create.js';
import { runFoldersList } from '../../src/commands/folders/list.js';
import { runPlanShow } from '../../src/commands/plan/show.js';
import { openapiDocument } from '../../src/contract/openapi.js';
import { CLOSED_KEYWORD, type JsonSchema } from '../../src/contract/schemas-shared.js';
import type { Folder, Plan, PlanningThread, PlanSubmitted, WorkItemSummary } from '../../src/contract/types.js';
import { createAdmin, type Admin } from '../../src/server/admin.js';
import { openDatabase, type Database } from '../../src/server/db.js';
import { createDesign } from '../../src/server/designs/index.js';
import { MODULES } from '../../src/server/modules.js';
import { configurePlanner, setPlanCredits } from '../../src/server/planning/index.js';
import { isolatedEnv, type CliEnv } from '../support/cli.js';
import { svcInProcess } from '../support/svc-in-process.js';
import { testContext } from '../support/context.js';
import { startLocalServer, type LocalServer } from '../support/server-process.js';
import { startTestService } from '../support/service.js';

let server: LocalServer;
let env: CliEnv;
let db: Database;
let admin: Admin;
const outputs: string[] = [];

beforeAll(async () => {
  server = await startLocalServer();
  env = isolatedEnv({ SVC_BASE_URL: server.url, SVC_TOKEN: server.token, SVC_PROJECT: 'DEMO' });
  // A second connection to the server's file (WAL, busy timeout): fixtures the product would make.
  db = openDatabase(server.db, MODULES);
  admin = createAdmin(db);
});

afterAll(async () => {
  db.close();
  const violations = await server.stop();
  expect(violations, 'responses that break the contract document').toEqual([]);
  for (const text of outputs) expect(text).not.toContain(server.token);
});

async function svc(args: string[], input?: string) {
  const r = await svcInProcess(args, { env, input });
  outputs.push(r.stdout, r.stderr);
  return r;
}

const CONTRACT = 'https://svc.local/api/openapi/v1.json';
const ajv = new Ajv2020({ strict: false, allErrors: true });
ajv.addKeyword({
  keyword: CLOSED_KEYWORD,
  schemaType: 'boolean',
  validate: (on: boolean, data: unknown, parent?: JsonSchema) =>
    !on ||
    typeof data !== 'object' ||
    data === null ||
    Array.isArray(data) ||
    Object.keys(data).every((k) => Object.hasOwn((parent?.properties ?? {}) as object, k)),
});
ajv.addSchema(openapiDocument as object, CONTRACT);
const component = (name: string): JsonSchema => ({ $ref: `${CONTRACT}#/components/schemas/${name}` });
const arrayOf = (items: JsonSchema): JsonSchema => ({ type: 'array', items });

/** The --json document of each command: the contract's resource, or (backlog) svc's own envelope. */
function shapeOf([group, sub, ...rest]: string[]): JsonSchema {
  if (group === 'folders') return sub === 'list' ? arrayOf(component('Folder')) : sub === 'rm' ? component('FolderDeleted') : component('Folder');
  if (group === 'backlog' && sub === 'move') return component('BacklogMoved');
  if (group === 'backlog') {
    return {
      type: 'object',
      properties: { total: { type: 'integer' }, items: arrayOf(component('WorkItemSummary')) },
      required: ['total', 'items'],
      additionalProperties: false,
    };
  }
  if (group === 'designs') return arrayOf(component('Design'));
  if (sub === 'show' || (sub === 'submit' && rest.includes('--wait'))) return component('Plan');
  return sub === 'submit' ? component('PlanSubmitted') : component('PlanningThread');
}

function shapeErrors(schema: JsonSchema, value: unknown): string[] {
  const validate = ajv.compile(schema as object);
  return validate(value) ? [] : (validate.errors ?? []).map((e: ErrorObject) => `${e.instancePath || '(root)'} ${e.message ?? ''}`);
}

/** Runs a command that must succeed with --json; its stdout is one document of the command's shape. */
async function json<T>(args: string[]): Promise<T> {
  const r = await svc([...args, '--json']);
  expect(r.code, r.stderr).toBe(0);
  const doc = JSON.parse(r.stdout) as T;
  expect(shapeErrors(shapeOf(args), doc), r.stdout.slice(0, 1000)).toEqual([]);
  return doc;
}

/** A failure is one line on stderr, nothing on stdout, and the documented exit code. */
async function fails(args: string[], code: number, message: RegExp) {
  const r = await svc(args);
  expect({ code: r.code, stderr: r.stderr }).toMatchObject({ code, stderr: expect.stringMatching(message) });
  expect(r.stderr.trim().split('\n')).toHaveLength(1);
  expect(r.stdout).toBe('');
}

const itemId = (key: string) => (db.prepare('SELECT id FROM work_items WHERE key = ?').get(key) as { id: string }).id;
const rootNames = async () => (await json<Folder[]>(['folders', 'list'])).map((f) => f.name);

describe('svc folders', () => {
  const ids: Record<string, string> = {};

  test('create prints the id (the sentence on stderr); --json prints the folder with its path', async () => {
    const r = await svc(['folders', 'create', 'Design']);
    expect(r.code, r.stderr).toBe(0);
    ids.Design = r.stdout.trim();
    expect(ids.Design).toMatch(/\S+/);
    expect(r.stderr).toBe('Created folder Design\n');
    const specs = await json<Folder>(['folders', 'create', ' Specs ', '--parent', ids.Design]);
    expect(specs).toMatchObject({ name: 'Specs', parentFolderId: ids.Design, path: ['Design', 'Specs'], projectKey: 'DEMO' });
    ids.Specs = specs.id;
    ids.Archive = (await json<Folder>(['folders', 'create', 'Archive'])).id;
    ids.Notes = (await json<Folder>(['folders', 'create', 'Notes'])).id;
  });

  test('list is one level in tree order; --recursive walks the subtree depth first; rows carry the path', async () => {
    expect(await rootNames()).toEqual(['Design', 'Archive', 'Notes']);
    const tree = await json<Folder[]>(['folders', 'list', '--recursive']);
    expect(tree.map((f) => f.path)).toEqual([['Design'], ['Design', 'Specs'], ['Archive'], ['Notes']]);
    const piped = await svc(['folders', '-r']);
    expect(piped.stdout.split('\n')[1]).toBe(`${ids.Specs}\tSpecs\tDesign / Specs`);
    expect((await json<Folder[]>(['folders', 'list', '--parent', ids.Design!])).map((f) => f.id)).toEqual([ids.Specs]);
  });

  // --after X is the contract's beforeId X (X sorts before it); --before Y is afterId Y.
  test.each([
    [
      ['--after', 'Design'],
      ['Design', 'Notes', 'Archive'],
    ],
    [
      ['--before', 'Design'],
      ['Notes', 'Design', 'Archive'],
    ],
    [['--last'], ['Design', 'Archive', 'Notes']],
    [['--first'], ['Notes', 'Design', 'Archive']],
    [
      ['--after', 'Design', '--before', 'Archive'],
      ['Design', 'Notes', 'Archive'],
    ],
  ])('move Notes %j → %j', async (flags, order) => {
    const args = flags.map((f) => ids[f] ?? f);
    const moved = await json<Folder>(['folders', 'move', ids.Notes!, ...args]);
    expect(moved.path).toEqual(['Notes']);
    expect(await rootNames()).toEqual(order);
  });

  test('move --parent puts it last in that folder; --root brings it back; the sentence names the path', async () => {
    const r = await svc(['folders', 'move', ids.Notes!, '--parent', ids.Design!]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe(`Moved ${ids.Notes} to Design / Notes\n`);
    expect((await json<Folder[]>(['folders', 'list', '--parent', ids.Design!])).map((f) => f.name)).toEqual(['Specs', 'Notes']);
    expect(await json<Folder>(['folders', 'move', ids.Notes!, '--root'])).toMatchObject({ parentFolderId: null, path: ['Notes'] });
    expect(await rootNames()).toEqual(['Design', 'Archive', 'Notes']);
  });

  test('rename changes the name and the path', async () => {
    expect(await json<Folder>(['folders', 'rename', ids.Specs!, 'Specifications'])).toMatchObject({
      name: 'Specifications',
      path: ['Design', 'Specifications'],
    });
    const r = await svc(['folders', 'rename', ids.Specs!, 'Specs']);
    expect(r.stderr).toBe(`Renamed ${ids.Specs} to Design / Specs\n`);
  });

  test.each([
    ['FOLDER_NAME_TAKEN on create (409, case-insensitive)', ['folders', 'create', 'design'], 1, /already named "design"/],
    ['FOLDER_NAME_TAKEN on rename', ['folders', 'rename', '@Archive', 'NOTES'], 1, /already named/],
    ['INVALID_FOLDER_NAME: blank', ['folders', 'create', '   '], 2, /1 to 120 characters/],
    ['INVALID_FOLDER_NAME: too long', ['folders', 'create', 'x'.repeat(121)], 2, /1 to 120 characters/],
    ['FOLDER_NOT_FOUND: parent of a create', ['folders', 'create', 'X', '--parent', 'fld_nope'], 4, /fld_nope is not a folder/],
    ['FOLDER_NOT_FOUND: parent of a listing', ['folders', 'list', '--parent', 'fld_nope'], 4, /fld_nope is not a folder/],
    ['FOLDER_NOT_FOUND: destination of a move', ['folders', 'move', '@Notes', '--parent', 'fld_nope'], 4, /fld_nope/],
    ['unknown folder: rename', ['folders', 'rename', 'fld_nope', 'Y'], 4, /not found/],
    ['unknown folder: move', ['folders', 'move', 'fld_nope', '--root'], 4, /not found/],
    ['unknown folder: rm', ['folders', 'rm', 'fld_nope'], 4, /not found/],
    ['FOLDER_CYCLE', ['folders', 'move', '@Design', '--parent', '@Specs'], 2, /descendants/],
    [
      'an anchor that is not a sibling names the flags',
      ['folders', 'move', '@Archive', '--after', '@Specs'],
      2,
      /not a sibling.*--after\/--first set beforeId/,
    ],
    ['--after itself', ['folders', 'move', '@Archive', '--after', '@Archive'], 2, /itself/],
    ['no placement at all', ['folders', 'move', '@Archive'], 2, /nothing to do/],
    ['--parent with --root', ['folders', 'move', '@Archive', '--root', '--parent', '@Design'], 2, /--parent and --root are exclusive/],
    ['--first with an anchor', ['folders', 'move', '@Archive', '--first', '--after', '@Design'], 2, /--first and --after cannot be combined/],
    ['no name', ['folders', 'create'], 2, /missing required argument 'name'/],
  ])('%s → exit %i, one line', async (_name, args, code, message) => {
    await fails(
      args.map((a) => (a.startsWith('@') ? ids[a.slice(1)]! : a)),
      code,
      message,
    );
  });

  test('FOLDER_NAME_TAKEN on move: a name clash at the destination → exit 1', async () => {
    const clash = await json<Folder>(['folders', 'create', 'notes', '--parent', ids.Design!]);
    await fails(['folders', 'move', ids.Notes!, '--parent', ids.Design!], 1, /already named "Notes"/);
    expect((await svc(['folders', 'rm', clash.id])).code).toBe(0);
  });

  test('CROSS_PROJECT_FOLDER: a destination in another project of the workspace → exit 2', async () => {
    const ws = (db.prepare(`SELECT id FROM workspaces WHERE slug = 'acme'`).get() as { id: string }).id;
    admin.createProject({ workspaceId: ws, key: 'OPS', name: 'Operations' });
    const elsewhere = await json<Folder>(['folders', 'create', 'Runbooks', '-p', 'OPS']);
    expect(elsewhere.projectKey).toBe('OPS');
    await fails(['folders', 'move', ids.Notes!, '--parent', elsewhere.id], 2, /belongs to another project/);
  });

  test('rm moves the child folders and filed items up, prints what moved, and the folder is gone', async () => {
    admin.setFields('DEMO-6', { folder_id: ids.Design! });
    const r = await svc(['folders', 'rm', ids.Design!]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(`folder\t${ids.Specs}\nwork-item\t${itemId('DEMO-6')}\n`);
    expect(r.stderr).toBe('Removed Design; moved 1 folder and 1 work item to the project root\n');
    // The child takes the deleted folder's place among its siblings.
    expect(await rootNames()).toEqual(['Specs', 'Archive', 'Notes']);
    await fails(['folders', 'rm', ids.Design!], 4, /not found/);
  });

  test('rm --json prints the contract document', async () => {
    const box = await json<Folder>(['folders', 'create', 'Box']);
    expect(await json(['folders', 'rm', box.id])).toEqual({ deletedFolderId: box.id, destinationFolderId: null, movedFolderIds: [], movedWorkItemIds: [] });
  });

  test('rm refused whole: FOLDER_NAME_TAKEN (a child clashes at the destination) and SUBTASK_NEEDS_PLACEMENT → exit 1', async () => {
    const box = await json<Folder>(['folders', 'create', 'Box']);
    const inner = await json<Folder>(['folders', 'create', 'ARCHIVE', '--parent', box.id]);
    await fails(['folders', 'rm', box.id], 1, /already named "ARCHIVE"/);
    await svc(['folders', 'rm', inner.id]);

    const story = db.prepare('SELECT parent_id FROM work_items WHERE key = ?').get('DEMO-5') as { parent_id: string };
    admin.setFields('DEMO-5', { parent_id: null, folder_id: box.id });
    try {
      await fails(['folders', 'rm', box.id], 1, /subtask DEMO-5 has no parent/);
    } finally {
      admin.setFields('DEMO-5', { parent_id: story.parent_id, folder_id: null });
    }
    expect((await svc(['folders', 'rm', box.id])).code).toBe(0);
  });
});

describe('svc backlog', () => {
  test('lists the backlog in rank order, done and sprint items left out, with the total', async () => {
    // The seed ranks nothing, and unranked items created in the same millisecond tie on an id.
    for (const [key, rank] of [
      ['DEMO-10', 'a'],
      ['DEMO-7', 'b'],
      ['DEMO-6', 'c'],
    ] as const)
      admin.setFields(key, { rank });
    const listing = await json<{ total: number; items: WorkItemSummary[] }>(['backlog']);
    expect(listing.total).toBe(8);
    const keys = listing.items.map((i) => i.key);
    expect(keys.slice(0, 3)).toEqual(['DEMO-10', 'DEMO-7', 'DEMO-6']);
    expect(keys.slice(3).sort()).toEqual(['DEMO-1', 'DEMO-3', 'DEMO-4', 'DEMO-5', 'DEMO-8']);
    const piped = await svc(['backlog']);
    expect(piped.stdout.split('\n')[0]).toBe('DEMO-10\ttask\ttodo\tmedium\tApprove the pricing copy');
    expect(piped.stderr).toBe('8 in the backlog\n');
  });

  test('--limit cuts the rows, not the total; --filter narrows both', async () => {
    const r = await svc(['backlog', '--limit', '2']);
    expect(
      r.stdout
        .trim()
        .split('\n')
        .map((l) => l.split('\t')[0]),
    ).toEqual(['DEMO-10', 'DEMO-7']);
    expect(r.stderr).toBe('2 of 8 in the backlog\n');
    expect(await json(['backlog', '--limit', '1'])).toMatchObject({ total: 8, items: [{ key: 'DEMO-10' }] });
    expect(await json(['backlog', '--filter', 'kind:bug,task'])).toMatchObject({ total: 3, items: [{ key: 'DEMO-10' }, { key: 'DEMO-7' }, { key: 'DEMO-6' }] });
  });

  test('move takes items out of their sprint and prints the moved keys', async () => {
    const r = await svc(['backlog', 'move', 'DEMO-2']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('DEMO-2\n');
    expect(r.stderr).toBe('Moved 1 work item to the backlog of DEMO\n');
    expect(await json(['backlog', 'move', 'DEMO-2', 'DEMO-6'])).toEqual({ movedKeys: ['DEMO-2', 'DEMO-6'] });
    expect((await json<{ total: number }>(['backlog'])).total).toBe(9);
  });

  test.each([
    [['backlog', '--filter', 'bogus:1'], 2, /unknown filter field 'bogus'/],
    [['backlog', '--limit', '0'], 2, /--limit takes a whole number/],
    [['backlog', 'move', 'demo-2'], 2, /not a work item key.*demo-2/],
    [['backlog', 'move', 'DEMO-2', 'DEMO-999'], 2, /DEMO-999/],
    [['backlog', 'move'], 2, /missing required argument 'keys'/],
    [['backlog', '-p', 'NOPE'], 4, /./],
  ])('%j → exit %i, one line', async (args, code, message) => {
    await fails(args, code, message);
  });
});

describe('svc designs', () => {
  beforeAll(() => {
    const project = (db.prepare(`SELECT id FROM projects WHERE key = 'DEMO'`).get() as { id: string }).id;
    const asset = (sourcePath: string) => ({
      name: sourcePath.split('/').pop()!,
      repository: 'acme/shop',
      sourcePath,
      mediaType: 'image/png',
      sizeBytes: 1024,
    });
    createDesign(db, {
      projectId: project,
      title: 'Checkout totals',
      status: 'approved',
      assets: [asset('design/checkout/totals.png')],
      createdAt: new Date('2026-01-01T00:00:00Z'),
    });
    createDesign(db, {
      projectId: project,
      title: 'Guest checkout form',
      status: 'approved',
      workItemId: itemId('DEMO-2'),
      assets: [asset('design/guest/form.png'), asset('design/guest/form-error.png')],
      createdAt: new Date('2026-02-01T00:00:00Z'),
    });
    createDesign(db, { projectId: project, title: 'Header (draft)', status: 'draft', assets: [asset('design/checkout/header.png')] });
  });

  test('lists approved designs newest first; rows show the item and where the files are', async () => {
    const rows = await json<{ title: string }[]>(['designs']);
    expect(rows.map((d) => d.title)).toEqual(['Guest checkout form', 'Checkout totals']);
    const piped = await svc(['designs']);
    const [first, second] = piped.stdout
      .trim()
      .split('\n')
      .map((l) => l.split('\t'));
    expect(first!.slice(1)).toEqual(['DEMO-2', '2026-02-01', 'design/guest/form.png (+1)', 'Guest checkout form']);
    expect(second!.slice(1)).toEqual(['-', '2026-01-01', 'design/checkout/totals.png', 'Checkout totals']);
  });

  test.each([
    [['--path-prefix', 'design/checkout/'], ['Checkout totals']],
    [['--path-prefix', 'Design/'], []],
    [['--query', 'GUEST'], ['Guest checkout form']],
    [['--query', 'checkout', '--path-prefix', 'design/guest/'], ['Guest checkout form']],
    [['--limit', '1'], ['Guest checkout form']],
  ])('designs %j → %j', async (flags, titles) => {
    expect((await json<{ title: string }[]>(['designs', ...flags])).map((d) => d.title)).toEqual(titles);
  });

  test('no match: no rows, a note on stderr, exit 0', async () => {
    const r = await svc(['designs', '--query', 'nothing like this']);
    expect(r).toMatchObject({ code: 0, stdout: '', stderr: 'no approved designs of DEMO match --path-prefix/--query\n' });
  });
});

describe('svc plan', () => {
  test('submitting a thread with no turns is refused: exit 2', async () => {
    await fails(['plan', 'submit', '--target', 'DEMO-6'], 2, /no turns/);
  });

  test('a turn is added to the thread of its anchors, which counts its turns', async () => {
    const thread = await json<PlanningThread>(['plan', 'Add a retry budget\nLog every retry', '--target', 'DEMO-6']);
    expect(thread).toMatchObject({ targetKeys: ['DEMO-6'], turnCount: 1 });
    const r = await svc(['plan', '--target', 'DEMO-6', 'Cap the backoff at a minute.']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/^Added a turn to the thread on DEMO-6: 2 turns\n.*svc plan submit --target DEMO-6/);
    const viaStdin = await svc(['plan', '-'], '- Write the release notes\n- Tag the release\n');
    expect(viaStdin.stderr).toMatch(/project-wide thread of DEMO: 1 turn\n/);
  });

  test('submit --wait polls until planned and prints the proposals', async () => {
    const r = await svc(['plan', 'submit', '--target', 'DEMO-6', '--wait']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/Plan for DEMO-6 · planned · 3 proposals/);
    expect(r.stdout.trim().split('\n')).toEqual([
      'P1\tadd\tsubtask\t-\tDEMO-6\t-\tAdd a retry budget',
      'P2\tadd\tsubtask\t-\tDEMO-6\tP1\tLog every retry',
      'P3\tadd\tsubtask\t-\tDEMO-6\tP2\tCap the backoff at a minute.',
    ]);
  });

  test('submit --wait --json prints the plan; plain submit prints the plan id and show reads it', async () => {
    const plan = await json<Plan>(['plan', 'submit', '--wait']);
    expect(plan).toMatchObject({ status: 'planned', proposalCount: 2 });
    expect(plan.proposals.map((p) => [p.op, p.proposedFields?.title])).toEqual([
      ['add', 'Write the release notes'],
      ['add', 'Tag the release'],
    ]);

    const submitted = await json<PlanSubmitted>(['plan', 'submit', '--target', 'DEMO-6']);
    expect(Object.keys(submitted).sort()).toEqual(['jobId', 'planId', 'statusUrl']);
    const plain = await svc(['plan', 'submit']);
    expect(plain.code, plain.stderr).toBe(0);
    const planId = plain.stdout.trim();
    expect(plain.stderr).toContain(`svc plan show ${planId}`);
    const shown = await json<Plan>(['plan', 'show', planId]);
    expect(shown.id).toBe(planId);
    expect(['generating', 'planned']).toContain(shown.status);
  });

  test('credits exhausted (402) → exit 6; no planning dependency (503) → exit 5', async () => {
    const ws = (db.prepare(`SELECT id FROM workspaces WHERE slug = 'acme'`).get() as { id: string }).id;
    setPlanCredits(db, ws, 0);
    try {
      await fails(['plan', 'submit', '--target', 'DEMO-6'], 6, /./);
    } finally {
      setPlanCredits(db, ws, null);
    }
    configurePlanner(db, { kind: 'none' });
    try {
      await fails(['plan', 'submit', '--target', 'DEMO-6', '--max-wait', '1s'], 5, /./);
    } finally {
      configurePlanner(db, { kind: 'builtin' });
    }
  });

  test('submit --wait: a planning job that fails ends the wait with exit 1 and still prints the plan', async () => {
    await svc(['plan', 'Round half to even', '--target', 'DEMO-7']);
    configurePlanner(db, { kind: 'command', command: 'echo "no plan today" >&2; exit 3' });
    try {
      const r = await svc(['plan', 'submit', '--target', 'DEMO-7', '--wait', '--json']);
      expect(r.code).toBe(1);
      expect(JSON.parse(r.stdout)).toMatchObject({ status: 'generating', proposals: [] });
      expect(r.stderr).toMatch(/Plan plan_\S+ failed: /);
    } finally {
      configurePlanner(db, { kind: 'builtin' });
    }
  });

  test('submit --wait --timeout: still generating at the deadline → exit 1, one line naming the plan', async () => {
    await svc(['plan', 'Fix the rounding', '--target', 'DEMO-8']);
    // A planner that outlives the wait; the server kills its process group when it stops.
    configurePlanner(db, { kind: 'command', command: 'sleep 30' });
    try {
      const r = await svc(['plan', 'submit', '--target', 'DEMO-8', '--wait', '--timeout', '1s']);
      expect(r.code).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr.trim().split('\n').at(-1)).toMatch(/^svc: plan (plan_\S+) did not finish within 1s; see it later with `svc plan show \1`$/);
    } finally {
      configurePlanner(db, { kind: 'builtin' });
    }
  });

  test.each([
    [['plan', '   '], 2, /the turn is empty/],
    [['plan', 'text', '--target', 'demo-6'], 2, /--target takes work item keys.*demo-6/],
    [['plan', 'text', '--target', 'DEMO-999'], 2, /DEMO-999/],
    [['plan', 'submit', '--wait', '--timeout', 'soon'], 2, /invalid duration "soon" for --timeout/],
    [['plan', 'show', 'plan_nope'], 4, /not found/],
  ])('%j → exit %i, one line', async (args, code, message) => {
    await fails(args, code, message);
  });
});

describe('help', () => {
  test.each([
    'folders list',
    'folders create',
    'folders rename',
    'folders move',
    'folders rm',
    'backlog list',
    'backlog move',
    'designs',
    'plan add',
    'plan submit',
    'plan show',
  ])('svc %s --help has a description and an example', async (command) => {
    const r = await svcInProcess([...command.split(' '), '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Usage: svc /);
    expect(r.stdout).toMatch(/Examples:\n {2}\$ svc /);
  });

  test('folders move --help explains the anchors', async () => {
    expect((await svcInProcess(['folders', 'move', '--help'])).stdout).toMatch(/--after <id> +place it right after this sibling/);
  });
});

// In-process, with in-memory streams: what a pipe cannot show.
describe('in-process', () => {
  test.each([
    [{ after: 'A' }, { beforeId: 'A' }],
    [{ before: 'B' }, { afterId: 'B' }],
    [
      { after: 'A', before: 'B' },
      { beforeId: 'A', afterId: 'B' },
    ],
    [{ first: true }, { beforeId: null }],
    [{ last: true }, { afterId: null }],
    [{ parent: 'P' }, { parentFolderId: 'P' }],
    [
      { root: true, first: true },
      { parentFolderId: null, beforeId: null },
    ],
    [
      { parent: 'P', before: 'B' },
      { parentFolderId: 'P', afterId: 'B' },
    ],
  ])('folders move flags %j → body %j', (flags, body) => {
    expect(placementOf({ id: 'F', ...flags })).toEqual(body);
  });

  test.each([
    [{}, /nothing to do/],
    [{ root: true, parent: 'P' }, /exclusive/],
    [{ first: true, last: true }, /--first and --last cannot be combined/],
    [{ last: true, before: 'B' }, /--last and --before cannot be combined/],
  ])('folders move flags %j → usage error', (flags, message) => {
    expect(() => placementOf({ id: 'F', ...flags })).toThrow(message);
  });

  test('on a TTY: folders list is an aligned table with a header and the path; plan show a table of proposals', async () => {
    const service = await startTestService();
    try {
      const ctx = () =>
        testContext({ tty: true, env: { SVC_BASE_URL: service.url, SVC_TOKEN: service.token, SVC_PROJECT: service.projectKey, NO_COLOR: '1' } });
      const made = ctx();
      await runFoldersCreate({ name: 'Design' }, made);
      const design = made.stdout.text.trim();
      await runFoldersCreate({ name: 'Specs', parent: design }, ctx());
      const listed = ctx();
      await runFoldersList({ recursive: true }, listed);
      const lines = listed.stdout.text.trimEnd().split('\n');
      expect(lines[0]).toMatch(/^ID +NAME +PATH$/);
      expect(lines[2]).toMatch(/^fld_\S+ +Specs +Design \/ Specs$/);

      await service.call('POST', `/projects/${service.projectKey}/plan-session/turns`, { body: { body: 'One\nTwo' } });
      // The in-process test service has no planner unless one is configured.
      configurePlanner(service.db, { kind: 'builtin' });
      const { body } = await service.call('POST', `/projects/${service.projectKey}/plan-session/submissions`, { body: {} });
      const shown = ctx();
      const status = async () => (await service.call('GET', `/plans/${body.planId}/status`)).body.status;
      await vi.waitUntil(async () => (await status()) !== 'generating', { timeout: 10_000, interval: 20 });
      await runPlanShow({ id: body.planId }, shown);
      expect(shown.stdout.text.split('\n')[0]).toMatch(/^REF +OP +KIND +KEY +PARENT +BLOCKED BY +TITLE$/);
      expect(shown.stdout.text.split('\n')[2]).toMatch(/^P2 +add +task +- +- +P1 +Two$/);
      expect(shown.stderr.text).toMatch(/· planned · 2 proposals/);
    } finally {
      await service.close();
    }
  });
});
