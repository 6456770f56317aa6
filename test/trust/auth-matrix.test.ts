// The auth matrix: every operation × {no token, bad token, other workspace, narrowed to
// another project, missing scope, hosted run credential}, plus an all-scopes control column that
// proves each request addresses a real resource (so a 404 elsewhere means "outside", not "gone").
// The expected answer follows the contract's permissions and docs/hosted.md:
// - no token or a bad one (malformed, unknown, revoked, expired, owner gone): 401;
// - a token of another workspace, or narrowed to another project: 404 for anything it names
//   (the same as nonexistent); getMe, listWorkspaces, listProjects answer its own identity and lists;
// - a valid token lacking the operation's permission: 403;
// - a hosted run's credential: getDispatchRun, getWorkItem (its own cards), 29, 27, 30 on its own run only (404 on
//   another run or item), 403 for every other operation;
// - getGitCredential refuses every personal access token, and any run's credential but the run's own, with
//   403, before the run is read.
// Every refused request must leave the store unchanged.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { OPERATIONS, RUN_CREDENTIAL_OPERATIONS } from '../../src/contract/operations.js';

/** An operation with its literal id, so the switch below must name every one of the 31. */
type Op = (typeof OPERATIONS)[number];
import { SCOPES } from '../../src/contract/types.js';
import { mintRunCredential } from '../../src/server/dispatch-runs/index.js';
import { configurePlanner } from '../../src/server/planning/index.js';
import { startTestService, type TestService } from '../support/service.js';
import { changeCount, storeDigest, waitFor } from './support.js';

let s: TestService;
let n = 0;

interface Tokens {
  control: string;
  otherWorkspace: string;
  narrowed: string;
  missingScope: Record<string, string>;
  bad: string[];
}
let tokens: Tokens;

/** Resources of the seeded workspace every request addresses; destructive ops get fresh ones. */
interface World {
  key: string;
  folderId: string;
  planId: string;
  /** A local run opened with a scope (getCloseOutPrompt needs one). */
  runId: string;
  hostedRunId: string;
  hostedCard: string;
  runToken: string;
}
let w: World;

const P = () => s.projectKey;

async function ok(method: string, path: string, body?: unknown) {
  const r = await s.call(method, path, { body });
  if (r.status >= 300) throw new Error(`fixture ${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

const item = (title = `item ${++n}`) => s.admin.createWorkItem({ projectKey: P(), kind: 'task', title, targetRepo: 'acme/web' }).key;

async function openRun(body: Record<string, unknown> = {}): Promise<{ id: string; card: string }> {
  const card = item();
  const r = await ok('POST', '/dispatch-runs', { projectKey: P(), command: 'run', cards: [{ workItemKey: card }], ...body });
  return { id: r.run.id as string, card };
}

async function settlePlans(): Promise<void> {
  await waitFor(
    'planning jobs to finish',
    () => Number((s.db.prepare("SELECT COUNT(*) AS n FROM plan_jobs WHERE status IN ('queued','running')").get() as { n: number }).n) === 0,
    20_000,
  );
}

beforeAll(async () => {
  s = await startTestService({ config: { rateLimit: 1_000_000 } });
  configurePlanner(s.db, { kind: 'builtin' });
  const other = s.admin.createWorkspace({ name: 'Elsewhere', slug: 'elsewhere' });
  const stranger = s.admin.createUser({ name: 'Stranger', email: 'stranger@test.example' });
  s.admin.addMember(other.id, stranger.id);
  s.admin.createProject({ workspaceId: other.id, key: 'OTHER', name: 'Other project' });
  s.admin.createProject({ workspaceId: s.workspaceId, key: 'SIDE', name: 'Side project' });
  const leaver = s.admin.createUser({ name: 'Leaver', email: 'leaver@test.example' });
  s.admin.addMember(s.workspaceId, leaver.id);
  const leaverToken = s.admin.createToken({ workspaceId: s.workspaceId, userId: leaver.id }).token;
  s.admin.removeMember(s.workspaceId, leaver.id);
  const revoked = s.admin.createToken({ workspaceId: s.workspaceId, userId: s.userId }).token;
  s.admin.revokeToken(revoked);
  const expired = s.admin.createToken({ workspaceId: s.workspaceId, userId: s.userId, expiresAt: '2020-01-01T00:00:00Z' }).token;
  tokens = {
    control: s.token,
    otherWorkspace: s.admin.createToken({ workspaceId: other.id, userId: stranger.id }).token,
    narrowed: s.admin.createToken({ workspaceId: s.workspaceId, userId: s.userId, projectKey: 'SIDE' }).token,
    missingScope: Object.fromEntries(
      SCOPES.map((scope) => [scope, s.admin.createToken({ workspaceId: s.workspaceId, userId: s.userId, scopes: SCOPES.filter((x) => x !== scope) }).token]),
    ),
    bad: [
      `svc_pat_${'A1b2C3d4'.repeat(4)}`,
      'svc_pat_short',
      'ghp_0123456789abcdef0123456789abcdef0123',
      `svc_run_${'Z9y8X7w6'.repeat(4)}`,
      '',
      'null',
      revoked,
      expired,
      leaverToken,
    ],
  };
  const folderId = (await ok('POST', `/projects/${P()}/folders`, { name: 'matrix' })).id as string;
  await ok('POST', `/projects/${P()}/plan-session/turns`, { body: '- one\n- two' });
  const planId = (await ok('POST', `/projects/${P()}/plan-session/submissions`, {})).planId as string;
  await settlePlans();
  const story = s.admin.createWorkItem({ projectKey: P(), kind: 'story', title: 'scope' }).key;
  const run = await openRun({ scopeKey: story });
  const hosted = await openRun({ origin: 'hosted' });
  w = { key: item(), folderId, planId, runId: run.id, hostedRunId: hosted.id, hostedCard: hosted.card, runToken: mintRunCredential(s.db, hosted.id) };
});

afterAll(async () => {
  await s?.close();
});

interface Req {
  method: string;
  path: string;
  body?: unknown;
}

/**
 * The request of each operation against the seeded workspace. `fresh` gives destructive ops
 * (delete, close) a resource of their own so each column starts from the same world.
 */
async function requestFor(op: Op, who: 'pat' | 'run'): Promise<Req> {
  const runId = who === 'run' ? w.hostedRunId : w.runId;
  switch (op.id) {
    case 'getMe':
      return { method: 'GET', path: '/me' };
    case 'listWorkspaces':
      return { method: 'GET', path: '/workspaces' };
    case 'listProjects':
      return { method: 'GET', path: '/projects' };
    case 'getProject':
      return { method: 'GET', path: `/projects/${P()}` };
    case 'listWorkItems':
      return { method: 'GET', path: `/projects/${P()}/work-items` };
    case 'createWorkItem':
      return { method: 'POST', path: `/projects/${P()}/work-items`, body: { kind: 'task', title: 'made by the matrix' } };
    case 'countWorkItems':
      return { method: 'GET', path: `/projects/${P()}/work-items/count` };
    case 'getWorkItem':
      return { method: 'GET', path: `/work-items/${who === 'run' ? w.hostedCard : w.key}` };
    case 'updateWorkItem':
      return { method: 'PATCH', path: `/work-items/${w.key}`, body: { title: `renamed ${++n}` } };
    case 'listBacklog':
      return { method: 'GET', path: `/projects/${P()}/backlog` };
    case 'moveToBacklog':
      return { method: 'POST', path: `/projects/${P()}/backlog/work-items`, body: { workItemKeys: [w.key] } };
    case 'listDesigns':
      return { method: 'GET', path: `/projects/${P()}/designs` };
    case 'listFolders':
      return { method: 'GET', path: `/projects/${P()}/folders` };
    case 'createFolder':
      return { method: 'POST', path: `/projects/${P()}/folders`, body: { name: `folder ${++n}` } };
    case 'getFolder':
      return { method: 'GET', path: `/folders/${w.folderId}` };
    case 'updateFolder':
      return { method: 'PATCH', path: `/folders/${w.folderId}`, body: { name: `matrix ${++n}` } };
    case 'deleteFolder':
      return { method: 'DELETE', path: `/folders/${(await ok('POST', `/projects/${P()}/folders`, { name: `doomed ${++n}` })).id}` };
    case 'openPlanSession':
      return { method: 'POST', path: `/projects/${P()}/plan-session`, body: {} };
    case 'addPlanTurn':
      return { method: 'POST', path: `/projects/${P()}/plan-session/turns`, body: { body: `turn ${++n}` } };
    case 'submitPlanSession':
      return { method: 'POST', path: `/projects/${P()}/plan-session/submissions`, body: {} };
    case 'getPlan':
      return { method: 'GET', path: `/plans/${w.planId}` };
    case 'getPlanStatus':
      return { method: 'GET', path: `/plans/${w.planId}/status` };
    case 'listReadyBugs':
      return { method: 'GET', path: `/projects/${P()}/ready/bugs` };
    case 'listReadyContainers':
      return { method: 'GET', path: `/projects/${P()}/ready/containers` };
    case 'openDispatchRun':
      return { method: 'POST', path: '/dispatch-runs', body: { projectKey: P(), command: 'run', cards: [{ workItemKey: item() }] } };
    case 'getDispatchRun':
      return { method: 'GET', path: `/dispatch-runs/${runId}` };
    case 'closeDispatchRun': {
      // A run of its own: the close must not end the shared runs (nor kill the shared credential).
      const fresh = who === 'run' ? null : await openRun();
      return { method: 'POST', path: `/dispatch-runs/${fresh?.id ?? runId}/close`, body: { stopReason: 'completed', status: 'succeeded' } };
    }
    case 'getCloseOutPrompt':
      return { method: 'GET', path: `/dispatch-runs/${runId}/close-out-prompt` };
    case 'appendDispatchEvents':
      return { method: 'POST', path: `/dispatch-runs/${runId}/events`, body: { events: [{ body: 'matrix' }] } };
    // Always a hosted run: only its own credential is answered, every PAT is refused with 403.
    case 'getGitCredential':
      return { method: 'POST', path: `/dispatch-runs/${w.hostedRunId}/git-credential` };
    case 'heartbeatDispatchRun':
      return { method: 'POST', path: `/dispatch-runs/${runId}/heartbeat` };
  }
}

const OPS: readonly Op[] = OPERATIONS;
const ACCOUNT_LEVEL = new Set(['getMe', 'listWorkspaces', 'listProjects']);

/** The store's digest, hashed again only once SQLite's change counter (the service's own connection) has moved. */
let known: { changes: number; digest: string } | undefined;
function digestNow(): { changes: number; digest: string } {
  const changes = changeCount(s.db);
  if (known?.changes !== changes) known = { changes, digest: storeDigest(s.db) };
  return known;
}

/** Sends one cell; a refused request must leave the store as it was. */
async function cell(req: Req, token: string | null): Promise<{ status: number; body: { error?: unknown; code?: unknown } | undefined }> {
  const before = digestNow();
  const r = await s.call(req.method, req.path, { token, ...(req.body !== undefined ? { body: req.body } : {}) });
  if (r.status >= 400) {
    // No row written at all (the counter did not move) proves it cheaply, as the fuzz does; a write
    // rolled back still moves the counter, and then the digest decides.
    if (changeCount(s.db) !== before.changes) {
      expect(storeDigest(s.db), `${req.method} ${req.path} was refused (${r.status}) but changed the store`).toBe(before.digest);
    }
    expect(typeof r.body?.error, 'error body has error').toBe('string');
    expect(typeof r.body?.code, 'error body has code').toBe('string');
  }
  if (r.status === 202) await settlePlans();
  return r;
}

describe('auth matrix', () => {
  describe('control: the all-scopes token of the workspace', () => {
    test.each(OPS.map((o) => [o.n, o.id, o] as const))('%i %s answers 2xx (getGitCredential: 403 for a PAT)', async (_n, _id, op) => {
      const r = await cell(await requestFor(op, 'pat'), tokens.control);
      if (op.id === 'getGitCredential') {
        expect(r.status).toBe(403);
        expect(r.body?.code).toBe('FORBIDDEN');
      } else {
        expect(r.status, JSON.stringify(r.body)).toBeGreaterThanOrEqual(200);
        expect(r.status, JSON.stringify(r.body)).toBeLessThan(300);
      }
    });
  });

  describe('no token', () => {
    test.each(OPS.map((o) => [o.n, o.id, o] as const))('%i %s: 401', async (_n, _id, op) => {
      const r = await cell(await requestFor(op, 'pat'), null);
      expect(r.status).toBe(401);
      expect(r.body?.code).toBe('UNAUTHORIZED');
    });
  });

  describe('bad tokens (malformed, unknown, revoked, expired, owner left the workspace)', () => {
    test.each(OPS.map((o) => [o.n, o.id, o] as const))('%i %s: 401 for each', async (_n, _id, op) => {
      for (const bad of tokens.bad) {
        const r = await cell(await requestFor(op, 'pat'), bad);
        expect(r.status, `token ${bad.slice(0, 12)}…`).toBe(401);
      }
      // Not even a Bearer scheme.
      const req = await requestFor(op, 'pat');
      const r = await s.call(req.method, req.path, {
        token: null,
        headers: { authorization: `Basic ${Buffer.from('u:p').toString('base64')}` },
        ...(req.body !== undefined ? { body: req.body } : {}),
      });
      expect(r.status).toBe(401);
    });
  });

  describe('a token of another workspace', () => {
    test.each(OPS.map((o) => [o.n, o.id, o] as const))('%i %s: 404 for what it names (403 for getGitCredential)', async (_n, _id, op) => {
      const r = await cell(await requestFor(op, 'pat'), tokens.otherWorkspace);
      if (op.id === 'getGitCredential') expect(r.status).toBe(403);
      else if (ACCOUNT_LEVEL.has(op.id)) {
        expect(r.status).toBe(200);
        // Its own workspace's view: nothing of the seeded workspace.
        expect(JSON.stringify(r.body)).not.toContain(s.workspaceId);
        expect(JSON.stringify(r.body)).not.toContain(`"key":"${P()}"`);
      } else expect(r.status, JSON.stringify(r.body)).toBe(404);
    });
  });

  describe('a token narrowed to another project of the workspace', () => {
    test.each(OPS.map((o) => [o.n, o.id, o] as const))('%i %s: 404 for what it names (403 for getGitCredential)', async (_n, _id, op) => {
      const r = await cell(await requestFor(op, 'pat'), tokens.narrowed);
      if (op.id === 'getGitCredential') expect(r.status).toBe(403);
      else if (ACCOUNT_LEVEL.has(op.id)) {
        expect(r.status).toBe(200);
        if (op.id === 'listProjects') expect((r.body as unknown as { items: { key: string }[] }).items.map((p) => p.key)).toEqual(['SIDE']);
      } else expect(r.status, JSON.stringify(r.body)).toBe(404);
    });
  });

  describe("a token missing the operation's permission", () => {
    test.each(OPS.map((o) => [o.n, o.id, o.permission, o] as const))('%i %s without %s: 403', async (_n, _id, permission, op) => {
      const r = await cell(await requestFor(op, 'pat'), tokens.missingScope[permission]!);
      expect(r.status).toBe(403);
      expect(r.body?.code).toBe('FORBIDDEN');
    });
  });

  describe('a hosted run credential', () => {
    // Its own run: the allowed operations answer; close last, since the credential dies with it.
    const order = [...OPS].sort((a, b) => Number(a.id === 'closeDispatchRun') - Number(b.id === 'closeDispatchRun'));
    test.each(order.map((o) => [o.n, o.id, o] as const))('%i %s on its own run', async (_n, _id, op) => {
      const r = await cell(await requestFor(op, 'run'), w.runToken);
      if (RUN_CREDENTIAL_OPERATIONS.includes(op.id)) {
        expect(r.status, JSON.stringify(r.body)).toBeGreaterThanOrEqual(200);
        expect(r.status, JSON.stringify(r.body)).toBeLessThan(300);
      } else {
        expect(r.status, JSON.stringify(r.body)).toBe(403);
      }
    });

    // getGitCredential on another run is "any other token": refused (403) before the run is read (the contract's endpoints).
    test.each(RUN_CREDENTIAL_OPERATIONS.map((id) => [id, id === 'getGitCredential' ? 403 : 404] as const))(
      '%s on another run (or a work item not of its cards): %i',
      async (id, expected) => {
        const hosted = await openRun({ origin: 'hosted' });
        const token = mintRunCredential(s.db, hosted.id);
        const other = await openRun({ origin: 'hosted' });
        const path: Record<string, Req> = {
          getDispatchRun: { method: 'GET', path: `/dispatch-runs/${other.id}` },
          getWorkItem: { method: 'GET', path: `/work-items/${other.card}` },
          appendDispatchEvents: { method: 'POST', path: `/dispatch-runs/${other.id}/events`, body: { events: [{ body: 'x' }] } },
          closeDispatchRun: { method: 'POST', path: `/dispatch-runs/${other.id}/close`, body: { stopReason: 'completed', status: 'succeeded' } },
          getGitCredential: { method: 'POST', path: `/dispatch-runs/${other.id}/git-credential` },
        };
        const r = await cell(path[id]!, token);
        expect(r.status, JSON.stringify(r.body)).toBe(expected);
      },
    );

    test('dies with its run: 401 on every operation afterwards', async () => {
      const hosted = await openRun({ origin: 'hosted' });
      const token = mintRunCredential(s.db, hosted.id);
      await ok('POST', `/dispatch-runs/${hosted.id}/close`, { stopReason: 'completed', status: 'succeeded' });
      for (const op of OPS) {
        const r = await cell(await requestFor(op, 'pat'), token);
        expect(r.status, op.id).toBe(401);
      }
    });
  });
});
