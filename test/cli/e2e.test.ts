// The few checks that need the real, built bin/svc.js as a user's shell starts it: the version
// baked in by the build, a typo and an unreachable service through the real process exit code,
// and a --json read against the real service running as its own process. Every other flag,
// output and --json check runs in-process (test/support/svc-in-process.ts).
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { isolatedEnv, runCli } from '../support/cli.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';

describe('bin/svc.js, spawned', () => {
  test('--version prints the package version', async () => {
    const r = await runCli(['--version']);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });

  test('--version --json (either order) prints one JSON document', async () => {
    for (const args of [
      ['--version', '--json'],
      ['--json', '-V'],
    ]) {
      const r = await runCli(args);
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual({ version: expect.stringMatching(/^\d+\.\d+\.\d+/) });
    }
  });

  test('a typo: one line naming the way to help, exit 2', async () => {
    const r = await runCli(['rnu', 'PROJ-1']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe("svc: unknown command 'rnu' (Did you mean run?) (see --help)\n");
    expect(r.stdout).toBe('');
  });

  test('no service: exit 5 after --max-wait, one line', async () => {
    const r = await runCli(['whoami', '--max-wait', '1s'], { env: isolatedEnv({ SVC_TOKEN: 'svc_pat_x', SVC_BASE_URL: 'http://127.0.0.1:9' }) });
    expect(r.code).toBe(5);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).not.toContain('svc_pat_x');
  });
});

describe('bin/svc.js against `svc server`, both spawned', () => {
  let server: ServerProcess;
  beforeAll(async () => {
    server = await startServerProcess();
  });
  afterAll(async () => {
    expect(await server.stop(), 'responses that break the contract document').toEqual([]);
  });

  test('items list --json: one JSON document of the seeded items on stdout, nothing else', async () => {
    const r = await runCli(['items', 'list', '--json'], { env: isolatedEnv({ SVC_BASE_URL: server.url, SVC_TOKEN: server.token, SVC_PROJECT: 'DEMO' }) });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    const items = JSON.parse(r.stdout) as { key: string }[];
    expect(items.map((i) => i.key)).toEqual(['DEMO-1', 'DEMO-2', 'DEMO-3', 'DEMO-4', 'DEMO-5', 'DEMO-6', 'DEMO-7', 'DEMO-8', 'DEMO-9', 'DEMO-10']);
    expect(r.stdout).not.toContain(server.token);
  });
});
