// `svc server done KEY --db FILE`: the local-only way to mark work done, so blocked cards become
// ready offline; it writes the database a running server reads from, outside /api/v1.
import { describe, expect, it } from 'vitest';
import { isolatedEnv } from '../../support/cli.js';
import { svcInProcess } from '../../support/svc-in-process.js';
import { localServerForFile } from '../../support/server-process.js';

const server = localServerForFile();

async function readyKeys(): Promise<string[]> {
  const res = await fetch(`${server.url}/api/v1/projects/DEMO/work-items?filter=${encodeURIComponent('ready:true leaf:true')}`, {
    headers: { authorization: `Bearer ${server.token}` },
  });
  return ((await res.json()) as { items: { key: string }[] }).items.map((i) => i.key);
}

describe('svc server done', () => {
  it('marks an item done while the server runs: the card it blocked becomes ready', async () => {
    // DEMO-4 (the form) is blocked by DEMO-3 (the API).
    expect(await readyKeys()).toContain('DEMO-3');
    expect(await readyKeys()).not.toContain('DEMO-4');
    const r = await svcInProcess(['server', 'done', 'DEMO-3', '--db', server.db], { env: isolatedEnv() });
    expect(r).toMatchObject({ code: 0, stdout: 'DEMO-3 done\n' });
    const ready = await readyKeys();
    expect(ready).toContain('DEMO-4');
    expect(ready).not.toContain('DEMO-3');
    const item = await fetch(`${server.url}/api/v1/work-items/DEMO-3`, { headers: { authorization: `Bearer ${server.token}` } });
    expect(((await item.json()) as { status: string }).status).toBe('done');
  });

  it.each([
    [['DEMO-999'], 4, /^svc: no work item DEMO-999 in /],
    [['demo-3'], 2, /^svc: not a work item key: demo-3$/],
    [['DEMO-5', '--status', 'in_progress'], 2, /^svc: --status must be a done status: done, cancelled/],
  ])('%j exits %i with one line and changes nothing', async (args, code, message) => {
    const before = await readyKeys();
    const r = await svcInProcess(['server', 'done', ...args, '--db', server.db], { env: isolatedEnv() });
    expect(r.code).toBe(code);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr.trim()).toMatch(message);
    expect(await readyKeys()).toEqual(before);
  });
});
