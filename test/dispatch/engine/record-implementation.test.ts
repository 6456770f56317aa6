// Work advances across machines (DISPATCH §8): an implemented leg records itself on its work item
// through op 9 (implementation fields, status in_review, If-Match), so a second machine (its own
// state folder and repository: it cannot see the first one's branches) selects nothing; --rerun
// still picks the cards; a failed leg leaves its item exactly as it was. Real service, real client.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runDispatch } from '../../../src/dispatch/lifecycle/dispatch.js';
import { recordImplementation } from '../../../src/dispatch/lifecycle/record-implementation.js';
import type { DispatchService } from '../../../src/dispatch/ports.js';
import { makeRepo } from '../../support/cli.js';
import { startHarness, type Harness } from './harness.js';

let h: Harness;
beforeEach(async () => {
  h = await startHarness();
});
afterEach(async () => {
  await h.close();
});

const detail = async (key: string) => (await h.svc.call('GET', `/work-items/${key}`)).body;
const version = (key: string) => (h.svc.db.prepare('SELECT version FROM work_items WHERE key = ?').get(key) as { version: number }).version;

/** Another machine: a fresh state folder and a repository of its own. */
async function elsewhere() {
  const repo = await makeRepo();
  const stateDir = mkdtempSync(join(tmpdir(), 'svc-state-other-'));
  return { opts: { repo }, deps: { stateDir } };
}

describe('an implemented leg records itself on its item', () => {
  it('writes the implementation and in_review; another machine then finds nothing; --rerun picks them again', async () => {
    const [a, b] = [h.item('task', 'A'), h.item('task', 'B')];
    const first = await runDispatch(h.opts({ command: 'batch', agent: { agentCmd: h.opts().agent.agentCmd!, model: 'm-1' } }), h.deps());
    expect(first.legs.map((l) => l.disposition)).toEqual(['implemented', 'implemented']);
    for (const key of [a, b]) {
      expect(await detail(key)).toMatchObject({
        status: 'in_review',
        statusCategory: 'in_progress',
        implementationSource: 'byok',
        implementationHarness: 'git',
        implementationModel: 'm-1',
      });
    }
    const other = await elsewhere();
    for (const command of ['batch', 'auto', 'next'] as const) {
      const s = await runDispatch(h.opts({ command, ...other.opts }), h.deps(other.deps));
      expect([command, s.runId, s.cards]).toEqual([command, null, []]);
    }
    const forced = await runDispatch(h.opts({ command: 'batch', dryRun: true, rerun: true, ...other.opts }), h.deps(other.deps));
    expect(forced.cards.map((c) => [c.key, c.skipReason])).toEqual([
      [a, null],
      [b, null],
    ]);
  });

  it('a failed leg leaves its item as it was: status, fields and ETag', async () => {
    const a = h.item('task', 'A');
    const before = await h.svc.call('GET', `/work-items/${a}`);
    const s = await runDispatch(h.opts({ command: 'batch', agent: { agentCmd: 'false' } }), h.deps());
    expect(s.legs.map((l) => l.disposition)).toEqual(['failed']);
    const after = await h.svc.call('GET', `/work-items/${a}`);
    expect(after.headers.etag).toBe(before.headers.etag);
    expect(after.body).toMatchObject({ status: 'todo', implementationSource: null, implementationHarness: null });
    // So it is still there for another machine.
    const other = await elsewhere();
    const dry = await runDispatch(h.opts({ command: 'batch', dryRun: true, ...other.opts }), h.deps(other.deps));
    expect(dry.cards.map((c) => c.key)).toEqual([a]);
  });

  it('sends If-Match: an item moved between the read and the write is read again, and the move is kept', async () => {
    const a = h.item('task', 'A');
    let reads = 0;
    const ifMatches: (string | undefined)[] = [];
    const service: DispatchService = {
      ...h.service,
      readWorkItem: async (key) => {
        const r = await h.service.readWorkItem!(key);
        // Someone retitles the item right after our first read.
        if (++reads === 1) h.svc.admin.setFields(key, { title: 'retitled' });
        return r;
      },
      updateWorkItem: (key, body, ifMatch) => {
        ifMatches.push(ifMatch);
        return h.service.updateWorkItem!(key, body, ifMatch);
      },
    };
    const ctx = { opts: h.opts({ command: 'batch' }), deps: h.deps({ service }), mode: 'implement' as const };
    expect(await recordImplementation(ctx, a)).toBe(true);
    expect(reads).toBe(2);
    expect(ifMatches).toHaveLength(2);
    expect(ifMatches.every((m) => typeof m === 'string' && m.length > 0)).toBe(true);
    expect(await detail(a)).toMatchObject({ title: 'retitled', status: 'in_review', implementationSource: 'byok' });
  });

  it('never reopens a done item, and a review records nothing', async () => {
    const a = h.item('task', 'A', { status: 'done' });
    const b = h.item('task', 'B');
    const opts = h.opts({ command: 'run' });
    expect(await recordImplementation({ opts, deps: h.deps(), mode: 'implement' }, a)).toBe(true);
    expect(await detail(a)).toMatchObject({ status: 'done', implementationSource: 'byok' });
    const v = version(b);
    expect(await recordImplementation({ opts, deps: h.deps(), mode: 'review' }, b)).toBe(false);
    expect(version(b)).toBe(v);
  });

  it('a service that refuses the record leaves the leg implemented, with one warning', async () => {
    const a = h.item('task', 'A');
    const service: DispatchService = {
      ...h.service,
      updateWorkItem: async () => {
        throw Object.assign(new Error('body: unknown property implementationSource'), { status: 422, code: 'INVALID_REQUEST' });
      },
    };
    const s = await runDispatch(h.opts({ command: 'batch' }), h.deps({ service }));
    expect(s.legs.map((l) => l.disposition)).toEqual(['implemented']);
    expect(h.seen.filter((l) => l.startsWith('warn '))).toEqual([
      `warn ${a}: implemented, but the service did not record it on the item (body: unknown property implementationSource); other machines may select it again`,
    ]);
    expect(await detail(a)).toMatchObject({ status: 'todo' });
  });

  it('a card another machine implemented between our selection and our open is not run again: the run stops replanned', async () => {
    const [a, b] = [h.item('task', 'A'), h.item('task', 'B')];
    let opens = 0;
    const service: DispatchService = {
      ...h.service,
      openDispatchRun: async (body) => {
        const opened = await h.service.openDispatchRun(body);
        // The other machine's run closed just before ours opened; its record is on A.
        if (++opens === 1) h.svc.admin.setStatus(a, 'in_review');
        return opened;
      },
    };
    const s = await runDispatch(h.opts({ command: 'auto' }), h.deps({ service }));
    expect(h.seen).toContain(`info ${a} was implemented by another run meanwhile: stopping replanned`);
    expect(s.legs.map((l) => [l.key, l.disposition])).toEqual([[b, 'implemented']]);
    expect(s.runs?.[0]?.stopReason).toBe('replanned');
  });

  it('a card recorded between our listing and our read of it is skipped, not run again', async () => {
    const [a, b] = [h.item('task', 'A'), h.item('task', 'B')];
    let lists = 0;
    const service: DispatchService = {
      ...h.service,
      listWorkItems: async (projectKey, query) => {
        const page = await h.service.listWorkItems(projectKey, query);
        // Another machine records A just after our listing held it.
        if (++lists === 1) h.svc.admin.setStatus(a, 'in_review');
        return page;
      },
    };
    const s = await runDispatch(h.opts({ command: 'batch' }), h.deps({ service }));
    expect(s.cards.map((c) => [c.key, c.skipReason])).toEqual([
      [a, 'implemented by an earlier run (in_review)'],
      [b, null],
    ]);
    expect(s.legs.map((l) => l.key)).toEqual([b]);
  });

  it('the record lands while the service still sees the leg running: no other run can open over the card in between', async () => {
    const a = h.item('task', 'A');
    const seenAtRecord: string[] = [];
    const service: DispatchService = {
      ...h.service,
      updateWorkItem: async (key, body, ifMatch, o) => {
        const updated = await h.service.updateWorkItem!(key, body, ifMatch, o);
        seenAtRecord.push((h.svc.db.prepare('SELECT disposition FROM dispatch_cards WHERE work_item_key = ?').get(key) as { disposition: string }).disposition);
        const other = await h.svc.call('POST', '/dispatch-runs', { body: { projectKey: h.svc.projectKey, command: 'run', cards: [{ workItemKey: key }] } });
        seenAtRecord.push(String(other.status));
        return updated;
      },
    };
    const s = await runDispatch(h.opts({ command: 'batch' }), h.deps({ service }));
    expect(s.legs.map((l) => l.disposition)).toEqual(['implemented']);
    expect(seenAtRecord).toEqual(['running', '409']);
    expect(await detail(a)).toMatchObject({ status: 'in_review' });
  });

  it('when the first try fails, the record is tried again alongside the run, which closes only after it', async () => {
    const [a, b] = [h.item('task', 'A'), h.item('task', 'B')];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let reads = 0;
    const service: DispatchService = {
      ...h.service,
      readWorkItem: async (key, o) => {
        if (key === a && ++reads === 1) throw Object.assign(new Error('unavailable'), { status: 503 });
        if (key === a) await gate;
        return h.service.readWorkItem!(key, o);
      },
    };
    const done = runDispatch(h.opts({ command: 'batch' }), h.deps({ service }));
    // B's leg runs and ends while A's second try waits: the first try held A's leg for nothing.
    await expect.poll(() => h.seen.includes(`end ${b} implemented`), { timeout: 20_000 }).toBe(true);
    expect((h.svc.db.prepare('SELECT status FROM dispatch_runs').get() as { status: string }).status).toBe('running');
    expect(await detail(a)).toMatchObject({ status: 'todo' });
    release();
    const s = await done;
    expect(s.status).toBe('succeeded');
    expect(await detail(a)).toMatchObject({ status: 'in_review' });
    expect(h.seen.filter((l) => l.startsWith('warn '))).toEqual([]);
  });
});
