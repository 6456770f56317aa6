// The one error line says what the user needs to act: which token the service refused (SVC_TOKEN
// or the stored login) and what to do, and which thing a 404 did not find.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isolatedEnv } from '../support/cli.js';
import { localServerForFile } from '../support/server-process.js';
import { svcInProcess } from '../support/svc-in-process.js';

const server = localServerForFile();

const never = `svc_pat_${'Z'.repeat(32)}`;

describe('a refused token (401)', () => {
  it('from SVC_TOKEN: says so, and how to use the stored login instead', async () => {
    const r = await svcInProcess(['items', 'list', '--project', 'DEMO'], { env: isolatedEnv({ SVC_BASE_URL: server.url, SVC_TOKEN: never }) });
    expect(r.code).toBe(3);
    expect(r.stderr).toBe(
      'svc: authentication required: the service refused the token in SVC_TOKEN: set SVC_TOKEN to a valid token, or unset it to use the one `svc auth login` stored\n',
    );
  });

  it('from the stored login: says so, and to log in again', async () => {
    const env = isolatedEnv({ SVC_BASE_URL: server.url });
    mkdirSync(env.SVC_CONFIG_DIR!, { recursive: true });
    writeFileSync(join(env.SVC_CONFIG_DIR!, 'config.json'), JSON.stringify({ token: never }), { mode: 0o600 });
    const r = await svcInProcess(['whoami'], { env });
    expect(r.code).toBe(3);
    expect(r.stderr).toBe(
      'svc: authentication required: the service refused the token `svc auth login` stored: log in again with a valid one (`svc auth login --with-token`)\n',
    );
    expect(r.stderr).not.toContain(never);
  });
});

describe('not found (404)', () => {
  it.each([
    [['runs', 'show', 'run_nope'], 'svc: dispatch run not found: /dispatch-runs/run_nope\n'],
    [['runs', 'watch', 'run_nope'], 'svc: dispatch run not found: /dispatch-runs/run_nope\n'],
    // The service's words already name it: nothing added.
    [['items', 'show', 'DEMO-999'], 'svc: work item DEMO-999 not found\n'],
  ])('%j names what it did not find, exit 4', async (args, line) => {
    const r = await svcInProcess(args, { env: isolatedEnv({ SVC_BASE_URL: server.url, SVC_TOKEN: server.token }) });
    expect([r.code, r.stderr]).toEqual([4, line]);
  });
});
