// `svc auto --recent-failures D` (docs/dispatch.md, `auto`): how far back a failure in a local run
// keeps its card out of auto; a bad duration is one line and exit 2, before anything opens.
import { beforeAll, describe, expect, it } from 'vitest';
import { isolatedEnv, makeRepo, type CliEnv } from '../../support/cli.js';
import { serviceForFile } from '../../support/service.js';
import { svcInProcess } from '../../support/svc-in-process.js';

const svc = serviceForFile();
let env: CliEnv;
let repo: string;
beforeAll(async () => {
  repo = await makeRepo();
  env = isolatedEnv({ SVC_BASE_URL: svc.url, SVC_TOKEN: svc.token, SVC_PROJECT: svc.projectKey });
});

const cli = (args: string[]) => svcInProcess(args, { env, cwd: repo });
const runsOnService = () => (svc.db.prepare('SELECT count(*) AS n FROM dispatch_runs').get() as { n: number }).n;

describe('svc auto --recent-failures', () => {
  it('a card that failed is skipped within the window (24h by default) and picked again past it', async () => {
    const key = svc.admin.createWorkItem({ projectKey: svc.projectKey, kind: 'task', title: 'fails once', type: 'code' }).key;
    const failed = await cli(['auto', '--max', '1', '--agent-cmd', 'false']);
    expect(failed.code).toBe(1);
    const skipping = `skipping cards that failed recently: ${key}`;
    expect((await cli(['auto', '--dry-run'])).stderr).toContain(skipping);
    expect((await cli(['auto', '--dry-run', '--recent-failures', '2h'])).stderr).toContain(skipping);
    const past = await cli(['auto', '--dry-run', '--recent-failures', '1ms']);
    expect(past.code).toBe(0);
    expect(past.stderr).not.toContain('skipping cards that failed recently');
    expect(past.stdout + past.stderr).toContain(key);
  });

  it('a duration it cannot read: one line, exit 2, no run opened', async () => {
    const before = runsOnService();
    const r = await cli(['auto', '--agent-cmd', 'true', '--recent-failures', 'soon']);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual(['svc: invalid duration "soon" for --recent-failures: use 500ms, 5s, 2m, 1h, 2d or a number of seconds']);
    expect(runsOnService()).toBe(before);
  });
});
