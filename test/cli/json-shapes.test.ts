// Every command's --json output, the command line run in-process against a spawned
// `svc server --seed demo`: stdout is exactly one JSON document and nothing else, and it has the
// shape docs/json.md gives it. The service's own resources are checked against the contract's OpenAPI components (the shapes the doc names in
// italics); svc's own shapes are written below, in step with the doc.
import { Ajv2020, type ErrorObject } from 'ajv/dist/2020.js';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import { text } from 'node:stream/consumers';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { openapiDocument } from '../../src/contract/openapi.js';
import { CLOSED_KEYWORD, type JsonSchema } from '../../src/contract/schemas-shared.js';
import { runServerCommand } from '../../src/server/index.js';
import { isolatedEnv, makeRepo, type CliEnv } from '../support/cli.js';
import { svcInProcess } from '../support/svc-in-process.js';
import { startLocalServer, type LocalServer } from '../support/server-process.js';

const CONTRACT = 'https://svc.local/api/openapi/v1.json';
const OWN = 'https://svc.local/cli/json.md';
const COMMIT = `${process.execPath} ${resolve(import.meta.dirname, '../fixtures/agents/commit.mjs')}`;

// --- the shapes of docs/json.md ---------------------------------------------------------------

const contract = (name: string): JsonSchema => ({ $ref: `${CONTRACT}#/components/schemas/${name}` });
const own = (name: string): JsonSchema => ({ $ref: `${OWN}#/$defs/${name}` });
const arrayOf = (items: JsonSchema): JsonSchema => ({ type: 'array', items });
/** An object with exactly these properties, every one of them present unless listed optional. */
const exact = (properties: Record<string, JsonSchema>, optional: string[] = []): JsonSchema => ({
  type: 'object',
  properties,
  required: Object.keys(properties).filter((k) => !optional.includes(k)),
  additionalProperties: false,
});
const str: JsonSchema = { type: 'string' };
const strOrNull: JsonSchema = { type: ['string', 'null'] };
const intOrNull: JsonSchema = { type: ['integer', 'null'] };
const user = exact({ id: str, name: str, email: str });

const ownShapes: JsonSchema = {
  $id: OWN,
  $defs: {
    RunSummary: exact(
      {
        runId: strOrNull,
        command: { enum: ['next', 'run', 'run_scope', 'batch', 'auto', 'fix', 'continue', 'review'] },
        scopeKey: strOrNull,
        stopReason: { enum: ['drained', 'completed', 'max', 'halted', 'interrupted', 'replanned', 'gated', 'abandoned', null] },
        status: { enum: ['succeeded', 'failed', 'cancelled', 'timed_out', null] },
        cards: arrayOf(own('CardSummary')),
        legs: arrayOf(own('LegSummary')),
        exitCode: { type: 'integer' },
        note: str,
        dryRun: { type: 'boolean' },
        closeOut: {
          oneOf: [{ type: 'null' }, exact({ outcome: { enum: ['succeeded', 'failed'] }, exitCode: intOrNull, reason: strOrNull })],
        },
        runs: arrayOf(own('RunSummary')),
      },
      ['closeOut', 'runs'],
    ),
    CardSummary: exact({ key: str, title: str, skipReason: strOrNull, gatedBy: strOrNull }),
    LegSummary: exact(
      {
        key: str,
        title: str,
        disposition: { enum: ['implemented', 'failed', 'skipped', 'not_reached'] },
        durationMs: { type: 'number', minimum: 0 },
        exitCode: intOrNull,
        reason: strOrNull,
        costUsd: { type: ['number', 'null'] },
        tokens: exact({ in: intOrNull, out: intOrNull }),
        sessionBranch: strOrNull,
        check: own('LegCheck'),
        attempts: { type: 'integer', minimum: 0 },
        network: own('LegNetwork'),
      },
      ['check', 'attempts', 'network'],
    ),
    LegNetwork: exact({
      mode: { enum: ['fenced', 'none'] },
      refused: arrayOf(exact({ host: str, port: intOrNull, how: str, count: { type: 'integer', minimum: 1 } })),
    }),
    LegCheck: exact({ status: { enum: ['passed', 'failed', 'none'] }, command: strOrNull, exitCode: intOrNull, output: strOrNull }),
    WorkflowCheck: exact({
      file: str,
      ok: { type: 'boolean' },
      problems: arrayOf(exact({ line: { type: 'integer', minimum: 1 }, message: str })),
      workflow: { type: ['object', 'null'] },
    }),
    ReportDocument: exact({ schema: { const: 'svc.report/1' }, runs: arrayOf(own('RunReport')) }),
    RunReport: exact({
      runId: str,
      projectKey: str,
      command: str,
      originalCommand: str,
      scopeKey: strOrNull,
      agent: strOrNull,
      model: strOrNull,
      status: str,
      stopReason: strOrNull,
      startedAt: str,
      endedAt: strOrNull,
      durationMs: { type: ['number', 'null'] },
      totals: exact({
        cards: { type: 'integer' },
        implemented: { type: 'integer' },
        failed: { type: 'integer' },
        skipped: { type: 'integer' },
        notReached: { type: 'integer' },
        running: { type: 'integer' },
        costUsd: { type: ['number', 'null'] },
        tokens: exact({ in: intOrNull, out: intOrNull }),
      }),
      legs: arrayOf(own('LegReport')),
      closeOut: { oneOf: [{ type: 'null' }, own('LegReport')] },
    }),
    LegReport: exact({
      key: str,
      title: strOrNull,
      disposition: str,
      skipReason: strOrNull,
      reason: strOrNull,
      startedAt: strOrNull,
      endedAt: strOrNull,
      durationMs: { type: ['number', 'null'] },
      exitCode: intOrNull,
      costUsd: { type: ['number', 'null'] },
      tokens: exact({ in: intOrNull, out: intOrNull }),
      branch: strOrNull,
      base: strOrNull,
      head: strOrNull,
      commits: arrayOf(exact({ sha: str, subject: str })),
      diffStat: strOrNull,
      logTail: strOrNull,
      check: own('LegCheck'),
      attempts: intOrNull,
      network: { oneOf: [{ type: 'null' }, own('LegNetwork')] },
    }),
    BacklogListing: exact({ total: { type: 'integer', minimum: 0 }, items: arrayOf(contract('WorkItemSummary')) }),
    RecoverResult: exact(
      {
        runId: str,
        action: { enum: ['closed', 'already-closed', 'skipped', 'failed'] },
        sent: { type: 'integer' },
        stopReason: strOrNull,
        status: strOrNull,
        detail: str,
      },
      ['detail'],
    ),
    RunLogs: exact({ runId: str, legs: arrayOf(exact({ key: str, log: str })) }),
    PruneResult: exact({
      removed: arrayOf(exact({ key: str, path: str })),
      kept: arrayOf(exact({ key: str, path: str, reason: str })),
      legFolders: arrayOf(str),
    }),
    AttachPlan: exact({
      runId: str,
      command: str,
      origin: str,
      status: str,
      scope: { oneOf: [{ type: 'null' }, exact({ workItemId: strOrNull, label: strOrNull })] },
      agent: strOrNull,
      model: strOrNull,
      legs: arrayOf(exact({ workItemKey: str, disposition: str, title: str, repositories: arrayOf(str), branch: str })),
      settled: arrayOf(exact({ workItemKey: str, disposition: str, skipReason: strOrNull })),
      push: { type: 'boolean' },
    }),
    Demo: exact({ summary: own('RunSummary'), run: { oneOf: [{ type: 'null' }, contract('DispatchRun')] }, repo: str, stateDir: str }),
    ConfigValue: exact({
      key: { enum: ['baseUrl', 'project', 'agent', 'model', 'parallel', 'sendLogs', 'maxWait', 'agentUser', 'network', 'pr', 'githubApiUrl'] },
      value: { type: ['string', 'number', 'boolean', 'null'] },
    }),
    ConfigList: exact({
      baseUrl: strOrNull,
      project: strOrNull,
      agent: strOrNull,
      model: strOrNull,
      parallel: intOrNull,
      sendLogs: { type: ['boolean', 'null'] },
      maxWait: strOrNull,
      agentUser: strOrNull,
      network: { enum: ['open', 'fenced', 'none', null] },
      pr: { type: ['boolean', 'null'] },
      githubApiUrl: strOrNull,
    }),
    AuthLogin: exact({ user, workspaceId: str, permissions: arrayOf(str) }),
    AuthStatus: exact({
      baseUrl: str,
      token: { type: 'string', pattern: '^svc_pat_\\*{8}(\\w{4})?$' },
      source: { enum: ['SVC_TOKEN', 'config'] },
      user,
      workspaceId: str,
      permissions: arrayOf(str),
    }),
    AuthLogout: exact({ loggedOut: { type: 'boolean' } }),
    ExitCode: exact({ code: { enum: [0, 1, 2, 3, 4, 5, 6, 130, 143] }, meaning: str }),
  },
};

const ajv = new Ajv2020({ strict: false, allErrors: true });
// The contract's components say "no other fields" with x-svc-closed; honour it here too.
ajv.addKeyword({
  keyword: CLOSED_KEYWORD,
  schemaType: 'boolean',
  validate: (enabled: boolean, data: unknown, parent?: JsonSchema) =>
    !enabled ||
    typeof data !== 'object' ||
    data === null ||
    Array.isArray(data) ||
    Object.keys(data).every((k) => Object.hasOwn((parent?.properties ?? {}) as object, k)),
});
ajv.addSchema(openapiDocument as object, CONTRACT);
ajv.addSchema(ownShapes as object);

function shapeErrors(schema: JsonSchema, value: unknown): string[] {
  const validate = ajv.compile(schema as object);
  return validate(value) ? [] : (validate.errors ?? []).map((e: ErrorObject) => `${e.instancePath || '(root)'} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
}

/** stdout must be one JSON document, alone: parsing the whole of it proves both. */
function oneDocument(stdout: string): unknown {
  expect(stdout.endsWith('\n'), 'the document ends with one newline').toBe(true);
  expect(stdout.trimStart()).toMatch(/^[[{]/);
  return JSON.parse(stdout);
}

// --- the service, a finished run, a hosted run --------------------------------------------------

let server: LocalServer;
let env: CliEnv;
let repo: string;
let runId: string;
let hostedRunId: string;
let folderId = '';
let planId = '';
const printed: string[] = [];

async function svc(args: string[], opts: { env?: CliEnv; input?: string; cwd?: string } = {}) {
  const r = await svcInProcess(args, { env: opts.env ?? env, input: opts.input, cwd: opts.cwd ?? repo });
  printed.push(r.stdout, r.stderr);
  return r;
}

beforeAll(async () => {
  server = await startLocalServer();
  env = isolatedEnv({ SVC_BASE_URL: server.url, SVC_TOKEN: server.token, SVC_PROJECT: 'DEMO', SVC_HEARTBEAT_INTERVAL: '1s' });
  repo = await makeRepo();
  const done = await svc(['run', 'DEMO-6', '--agent-cmd', COMMIT, '--json']);
  expect(done.code, done.stderr).toBe(0);
  runId = (JSON.parse(done.stdout) as { runId: string }).runId;
  const hosted = await svc(['run', 'DEMO-3', '--hosted', '--json']);
  expect(hosted.code, hosted.stderr).toBe(0);
  hostedRunId = (JSON.parse(hosted.stdout) as { run: { id: string } }).run.id;
}, 60_000);

afterAll(async () => {
  const violations = await server?.stop();
  expect(violations, 'responses that break the contract document').toEqual([]);
  for (const t of printed) expect(t).not.toContain(server.token);
});

// --- the commands -------------------------------------------------------------------------------

type Case = [title: string, args: () => string[], schema: JsonSchema];

const cases: Case[] = [
  ['whoami', () => ['whoami'], contract('Identity')],
  ['workspaces', () => ['workspaces'], arrayOf(contract('Workspace'))],
  ['projects', () => ['projects'], arrayOf(contract('Project'))],
  ['projects list', () => ['projects', 'list'], arrayOf(contract('Project'))],
  ['projects show', () => ['projects', 'show', 'DEMO'], contract('Project')],
  ['items list', () => ['items', 'list'], arrayOf(contract('WorkItemSummary'))],
  [
    'items list --filter --limit',
    () => ['items', 'list', '--filter', 'kind:bug,subtask', '--limit', '2'],
    { ...arrayOf(contract('WorkItemSummary')), maxItems: 2 },
  ],
  ['items show', () => ['items', 'show', 'DEMO-2'], contract('WorkItemDetail')],
  ['items count', () => ['items', 'count', '--filter', 'kind:subtask'], contract('WorkItemCount')],
  ['items create', () => ['items', 'create', '--kind', 'task', '--title', 'Made by the JSON test', '--priority', 'low'], contract('WorkItemDetail')],
  ['items edit', () => ['items', 'edit', 'DEMO-10', '--title', 'Approve the pricing copy, again'], contract('WorkItemDetail')],
  ['ready bugs', () => ['ready', 'bugs'], arrayOf(contract('ReadyBugGroup'))],
  [
    'ready bugs with lane filters',
    () => ['ready', 'bugs', '--priority', 'medium', '--kind', 'subtask', '--ancestor', 'DEMO-7'],
    arrayOf(contract('ReadyBugGroup')),
  ],
  ['ready containers', () => ['ready', 'containers'], arrayOf(contract('ReadyContainer'))],
  ['ready containers with lane filters', () => ['ready', 'containers', '--priority', 'high', '--assignee', 'none'], arrayOf(contract('ReadyContainer'))],
  ['runs show', () => ['runs', 'show', runId], contract('DispatchRun')],
  ['runs watch (a closed run)', () => ['runs', 'watch', runId], contract('DispatchRun')],
  ['runs recover', () => ['runs', 'recover'], arrayOf(own('RecoverResult'))],
  ['logs RUN', () => ['logs', runId], own('RunLogs')],
  ['logs RUN KEY', () => ['logs', runId, 'DEMO-6'], own('RunLogs')],
  ['runs report RUN', () => ['runs', 'report', runId], own('ReportDocument')],
  ['a dispatch command (run)', () => ['run', 'DEMO-8', '--agent-cmd', COMMIT], own('RunSummary')],
  ['auto (one run per round)', () => ['auto', '--max', '1', '--agent-cmd', COMMIT], { allOf: [own('RunSummary'), { required: ['runs'] }] }],
  [
    'a dry run',
    () => ['run_scope', 'DEMO-1', '--dry-run'],
    { allOf: [own('RunSummary'), { properties: { dryRun: { const: true }, runId: { const: null }, legs: { maxItems: 0 } } }] },
  ],
  ['a hosted open', () => ['run', 'DEMO-4', '--hosted'], contract('DispatchRunOpened')],
  ['worktrees prune', () => ['worktrees', 'prune'], own('PruneResult')],
  ['config set', () => ['config', 'set', 'parallel', '2'], own('ConfigValue')],
  ['config get', () => ['config', 'get', 'parallel'], { allOf: [own('ConfigValue'), { properties: { value: { const: 2 } } }] }],
  ['config list', () => ['config', 'list'], { allOf: [own('ConfigList'), { properties: { parallel: { const: 2 } } }] }],
  ['config unset', () => ['config', 'unset', 'parallel'], { allOf: [own('ConfigValue'), { properties: { value: { const: null } } }] }],
  ['auth status', () => ['auth', 'status'], own('AuthStatus')],
  ['help exit-codes', () => ['help', 'exit-codes'], { ...arrayOf(own('ExitCode')), minItems: 9 }],
  ['api GET /me', () => ['api', 'GET', '/me'], contract('Identity')],
  [
    'api GET --paginate',
    () => ['api', 'GET', '/projects/DEMO/work-items', '--paginate', '-f', 'limit=3'],
    { ...arrayOf(contract('WorkItemSummary')), minItems: 10 },
  ],
  ['api PATCH -f', () => ['api', 'PATCH', '/work-items/DEMO-9', '-f', 'priority=high'], contract('WorkItemDetail')],
  ['backlog', () => ['backlog'], own('BacklogListing')],
  [
    'backlog list --limit',
    () => ['backlog', 'list', '--limit', '2', '--filter', 'kind:subtask'],
    { allOf: [own('BacklogListing'), { properties: { items: { maxItems: 2 } } }] },
  ],
  ['backlog move', () => ['backlog', 'move', 'DEMO-10'], contract('BacklogMoved')],
  ['folders create', () => ['folders', 'create', 'Checkout'], contract('Folder')],
  ['folders', () => ['folders'], { ...arrayOf(contract('Folder')), minItems: 1 }],
  ['folders list --recursive', () => ['folders', 'list', '--recursive'], arrayOf(contract('Folder'))],
  ['folders rename', () => ['folders', 'rename', folderId, 'Checkout v2'], contract('Folder')],
  ['folders move', () => ['folders', 'move', folderId, '--root'], contract('Folder')],
  ['folders rm', () => ['folders', 'rm', folderId], contract('FolderDeleted')],
  ['designs', () => ['designs'], arrayOf(contract('Design'))],
  ['plan TEXT', () => ['plan', 'Split the checkout epic in two'], contract('PlanningThread')],
  ['plan submit', () => ['plan', 'submit'], contract('PlanSubmitted')],
  ['plan show', () => ['plan', 'show', planId], contract('Plan')],
];

describe('--json: one document of the documented shape', () => {
  test.each(cases)('%s', async (_title, args, schema) => {
    // --json first for some, last for others: it is a global flag.
    const argv = args();
    const r = await svc(argv.length % 2 ? ['--json', ...argv] : [...argv, '--json']);
    expect(r.code, r.stderr).toBe(0);
    const doc = oneDocument(r.stdout);
    // Later cases act on what earlier ones made.
    if (argv[0] === 'folders' && argv[1] === 'create') folderId = (doc as { id: string }).id;
    if (argv[0] === 'plan' && argv[1] === 'submit') planId = (doc as { planId: string }).planId;
    expect(shapeErrors(schema, doc), JSON.stringify(doc, null, 1).slice(0, 2000)).toEqual([]);
  });

  test('auth login and logout (no SVC_TOKEN: the stored token is used)', async () => {
    const own_ = isolatedEnv({ SVC_BASE_URL: server.url });
    const login = await svc(['auth', 'login', '--with-token', '--json'], { env: own_, input: `${server.token}\n` });
    expect(login.code, login.stderr).toBe(0);
    expect(shapeErrors(own('AuthLogin'), oneDocument(login.stdout))).toEqual([]);
    const status = await svc(['auth', 'status', '--json'], { env: own_ });
    expect(shapeErrors({ allOf: [own('AuthStatus'), { properties: { source: { const: 'config' } } }] }, oneDocument(status.stdout))).toEqual([]);
    const logout = await svc(['auth', 'logout', '--json'], { env: own_ });
    expect(oneDocument(logout.stdout)).toEqual({ loggedOut: true });
    expect(oneDocument((await svc(['auth', 'logout', '--json'], { env: own_ })).stdout)).toEqual({ loggedOut: false });
  });

  test('workflow check', async () => {
    const dir = await makeRepo();
    mkdirSync(join(dir, '.svc'));
    writeFileSync(join(dir, '.svc', 'workflow.yml'), 'setup: npm ci\nverify: npm test\n');
    const r = await svc(['workflow', 'check', '--json'], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    expect(shapeErrors(own('WorkflowCheck'), oneDocument(r.stdout))).toEqual([]);
  });

  test('attach --dry-run, inside a hosted run (SVC_RUN_ID, SVC_RUN_TOKEN)', async () => {
    // The run credential is minted the way `svc server run-token RUN --db FILE` does it.
    const out = new PassThrough();
    const err = new PassThrough();
    const code = await runServerCommand({ command: 'run-token', db: server.db, runId: hostedRunId }, { stdout: out, stderr: err });
    out.end();
    err.end();
    expect(code, await text(err)).toBe(0);
    const runToken = (await text(out)).trim();
    const hostedEnv = isolatedEnv({ SVC_BASE_URL: server.url, SVC_RUN_ID: hostedRunId, SVC_RUN_TOKEN: runToken });
    const r = await svc(['attach', '--dry-run', '--json'], { env: hostedEnv });
    printed.push(runToken);
    expect(r.code, r.stderr).toBe(0);
    const plan = oneDocument(r.stdout);
    expect(shapeErrors(own('AttachPlan'), plan)).toEqual([]);
    expect(plan).toMatchObject({ runId: hostedRunId, legs: [expect.objectContaining({ workItemKey: 'DEMO-3', branch: 'svc/DEMO-3' })] });
    expect(r.stdout).not.toContain(runToken);
  });

  test('demo: the embedded run as one document', async () => {
    // With --keep, so the folders it names are there to see; without it they are gone once it ends,
    // and nothing else is left in the temp folder (test/cli/run.test.ts, "svc demo").
    const r = await svc(['demo', '--json', '--keep'], { env: isolatedEnv() });
    expect(r.code, r.stderr).toBe(0);
    const doc = oneDocument(r.stdout) as { repo: string; stateDir: string };
    expect(shapeErrors(own('Demo'), doc)).toEqual([]);
    const { existsSync, rmSync } = await import('node:fs');
    expect([existsSync(doc.repo), existsSync(doc.stateDir)]).toEqual([true, true]);
    for (const dir of [doc.repo, doc.stateDir]) rmSync(dir, { recursive: true, force: true });
  });

  test('an error: stdout stays empty, one line on stderr, the documented exit code', async () => {
    const r = await svc(['items', 'show', 'DEMO-999', '--json']);
    expect(r.code).toBe(4);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });

  test('completion is not JSON, with or without --json', async () => {
    const r = await svc(['completion', 'bash', '--json']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^# bash completion for svc/);
    expect(() => JSON.parse(r.stdout)).toThrow();
  });
});

describe('docs/json.md', () => {
  test('names every command this test checks, and every shape it defines', async () => {
    const { readFileSync } = await import('node:fs');
    const doc = readFileSync(resolve(import.meta.dirname, '../../docs/json.md'), 'utf8');
    for (const name of Object.keys(ownShapes.$defs as object)) {
      if (name === 'CardSummary' || name === 'LegSummary' || name === 'LegCheck' || name === 'LegNetwork') expect(doc).toContain(`${name} =`);
      else expect(doc, name).toMatch(new RegExp(`^### ${name}$`, 'm'));
    }
    for (const c of [
      'whoami',
      'workspaces',
      'projects show KEY',
      'items list',
      'items show KEY',
      'items count',
      'items create',
      'items edit KEY',
      'ready bugs',
      'ready containers',
      'runs show ID',
      'runs watch ID',
      'runs recover',
      'runs report RUN',
      'logs RUN',
      'worktrees prune',
      'workflow check',
      'backlog',
      'backlog move KEY',
      'folders',
      'folders create NAME',
      'folders rm ID',
      'designs',
      'plan TEXT',
      'plan submit',
      'plan show ID',
      'attach --dry-run',
      'demo',
      'config get KEY',
      'config set KEY VALUE',
      'config unset KEY',
      'config list',
      'auth login --with-token',
      'auth status',
      'auth logout',
      'help exit-codes',
      'api METHOD PATH',
      'completion bash',
    ]) {
      expect(doc, c).toContain(`\`${c}`);
    }
  });
});
