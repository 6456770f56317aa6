// Hosted runs: the run's own credential (what it may reach, and on which run), getGitCredential's
// installation tokens, and their revocation when the run ends.
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import type { DispatchRun, GitCredential } from '../../../src/contract/types.js';
import { checkGitToken, mintRunCredential } from '../../../src/server/dispatch-runs/index.js';
import { ServiceError } from '../../../src/server/kernel.js';
import { startHarness, type Harness } from './harness.js';

let h: Harness;
let keys: string[];
let run: DispatchRun;
let runToken: string;
beforeEach(async () => {
  h = await startHarness({ config: { gitTokenTtlMs: 60 * 60_000 } });
  keys = [
    h.svc.admin.createWorkItem({ projectKey: 'PROJ', kind: 'task', title: 'api', targetRepo: 'acme/api', targetRepos: ['acme/web'] }).key,
    h.svc.admin.createWorkItem({ projectKey: 'PROJ', kind: 'task', title: 'docs', targetRepositories: ['acme/docs', 'acme/api'] }).key,
    h.svc.admin.createWorkItem({ projectKey: 'PROJ', kind: 'task', title: 'none' }).key,
  ];
  run = await h.open({ origin: 'hosted', cards: keys.map((workItemKey) => ({ workItemKey })) });
  runToken = h.runToken(run.id);
});
afterEach(async () => {
  await h.svc.close();
});

const trade = (id: string, token?: string | null) => h.svc.call('POST', `/dispatch-runs/${id}/git-credential`, { token });

describe('the run credential', () => {
  test('is svc_run_ + 32 base62, stored only as its hash', () => {
    expect(runToken).toMatch(/^svc_run_[A-Za-z0-9]{32}$/);
    const rows = h.svc.db.prepare('SELECT hash FROM run_credentials WHERE run_id = ?').all(run.id) as { hash: string }[];
    expect(rows).toHaveLength(1);
    expect(rows[0]!.hash).not.toContain(runToken.slice(8));
  });

  test('reads its own run; another run is a 404, as if it did not exist', async () => {
    const own = await h.svc.call('GET', `/dispatch-runs/${run.id}`, { token: runToken });
    expect(own.status).toBe(200);
    expect(own.body.id).toBe(run.id);
    const other = await h.open({ origin: 'hosted' });
    for (const path of [`/dispatch-runs/${other.id}`, '/dispatch-runs/run_nope']) {
      const res = await h.svc.call('GET', path, { token: runToken });
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('NOT_FOUND');
    }
    const res = await h.svc.call('POST', `/dispatch-runs/${other.id}/events`, { token: runToken, body: { events: [{}] } });
    expect(res.status).toBe(404);
    expect((await h.svc.call('POST', `/dispatch-runs/${other.id}/close`, { token: runToken, body: { stopReason: 'completed' } })).status).toBe(404);
  });

  test('appends to its own run and reads the work items of its own cards only', async () => {
    const appended = await h.svc.call('POST', `/dispatch-runs/${run.id}/events`, {
      token: runToken,
      body: { events: [{ workItemKey: keys[0], disposition: 'running' }] },
    });
    expect(appended.status).toBe(200);
    expect(appended.body.seq).toBe(1);
    expect((await h.svc.call('GET', `/work-items/${keys[0]}`, { token: runToken })).status).toBe(200);
    const stranger = h.items(1)[0]!;
    expect((await h.svc.call('GET', `/work-items/${stranger}`, { token: runToken })).status).toBe(404);
  });

  test('cannot list projects, open runs, beat or ask for the close-out prompt (403)', async () => {
    for (const [method, path, body] of [
      ['GET', '/projects', undefined],
      ['GET', '/me', undefined],
      ['POST', '/dispatch-runs', { projectKey: 'PROJ', command: 'run' }],
      ['POST', `/dispatch-runs/${run.id}/heartbeat`, undefined],
      ['GET', `/dispatch-runs/${run.id}/close-out-prompt`, undefined],
    ] as const) {
      const res = await h.svc.call(method, path, { token: runToken, body });
      expect(res.status, path).toBe(403);
      expect(res.body.code).toBe('FORBIDDEN');
    }
  });

  test('is minted only for a running hosted run', async () => {
    const local = await h.open();
    const refusal = (id: string) => {
      try {
        mintRunCredential(h.svc.db, id);
      } catch (err) {
        return err instanceof ServiceError ? [err.status, err.code] : err;
      }
      return 'minted';
    };
    expect(refusal(local.id)).toEqual([409, 'CONFLICT']);
    expect(refusal('run_nope')).toEqual([404, 'NOT_FOUND']);
    await h.svc.call('POST', `/dispatch-runs/${run.id}/close`, { body: { stopReason: 'completed' } });
    expect(refusal(run.id)).toEqual([409, 'RUN_CLOSED']);
  });
});

describe('git credentials (getGitCredential)', () => {
  test('one entry per repository of the run, sharing one installation token, with the opener as dispatchedBy', async () => {
    const res = await trade(run.id, runToken);
    expect(res.status).toBe(200);
    expect(res.body.dispatchedBy).toBe(h.svc.userId);
    const creds: GitCredential[] = res.body.credentials;
    expect(creds.map((c) => c.repository)).toEqual(['acme/api', 'acme/web', 'acme/docs']);
    const expiresAt = new Date(h.clock.now().getTime() + 60 * 60_000).toISOString();
    for (const c of creds) {
      expect(c).toEqual({
        repository: c.repository,
        url: `${h.svc.url}/git/${c.repository}.git`,
        username: 'x-access-token',
        token: creds[0]!.token,
        expiresAt,
      });
    }
    expect(creds[0]!.token).toMatch(/^ghs_[A-Za-z0-9]{36}$/);
    const token = creds[0]!.token;
    expect(checkGitToken(h.svc.db, token, 'acme/docs', h.clock.now())).toBe(true);
    // Narrowed to the run's repositories, and to its lifetime.
    expect(checkGitToken(h.svc.db, token, 'acme/secret', h.clock.now())).toBe(false);
    expect(checkGitToken(h.svc.db, 'ghs_forged', 'acme/docs', h.clock.now())).toBe(false);
    h.clock.advance(60 * 60_000);
    expect(checkGitToken(h.svc.db, token, 'acme/docs', h.clock.now())).toBe(false);
  });

  test('each trade hands out a fresh token; both stay valid until the run ends', async () => {
    const first = (await trade(run.id, runToken)).body.credentials[0].token;
    const second = (await trade(run.id, runToken)).body.credentials[0].token;
    expect(second).not.toBe(first);
    expect(checkGitToken(h.svc.db, first, 'acme/api', h.clock.now())).toBe(true);
    expect(checkGitToken(h.svc.db, second, 'acme/api', h.clock.now())).toBe(true);
  });

  test("a personal token, the operator's included, is refused 403 before the run is read", async () => {
    for (const id of [run.id, 'run_nope']) {
      const res = await trade(id);
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('FORBIDDEN');
    }
    expect((await trade(run.id, null)).status).toBe(401);
  });

  test("another run's credential is refused 403 as well", async () => {
    const other = await h.open({ origin: 'hosted' });
    const res = await trade(run.id, h.runToken(other.id));
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('FORBIDDEN');
  });

  test('closing the run revokes every git token and the run credential', async () => {
    const token = (await trade(run.id, runToken)).body.credentials[0].token;
    const closed = await h.svc.call('POST', `/dispatch-runs/${run.id}/close`, { token: runToken, body: { stopReason: 'completed' } });
    expect(closed.status).toBe(200);
    expect(closed.body.cards.map((c: { disposition: string }) => c.disposition)).toEqual(['not_reached', 'not_reached', 'not_reached']);
    expect(checkGitToken(h.svc.db, token, 'acme/api', h.clock.now())).toBe(false);
    // The credential died with the run: every later call is the undifferentiated 401.
    for (const res of [await trade(run.id, runToken), await h.svc.call('GET', `/dispatch-runs/${run.id}`, { token: runToken })]) {
      expect(res.status).toBe(401);
    }
    // The operator still reads the closed run.
    expect((await h.svc.call('GET', `/dispatch-runs/${run.id}`)).body.status).toBe('succeeded');
  });

  test('a run with no repositories gets an empty list', async () => {
    const bare = await h.open({ origin: 'hosted', cards: [] });
    const res = await trade(bare.id, h.runToken(bare.id));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ credentials: [], dispatchedBy: h.svc.userId });
  });
});
