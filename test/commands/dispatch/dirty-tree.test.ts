// Uncommitted changes never reach the agents (each leg branches from HEAD in its own worktree):
// svc says so in one line before the run opens; `--no-worktree`, which would check branches out
// over them, is refused before anything opens.
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isolatedEnv, makeRepo, type CliEnv } from '../../support/cli.js';
import { startLocalServer, type LocalServer } from '../../support/server-process.js';
import { svcInProcess } from '../../support/svc-in-process.js';

let server: LocalServer;
let env: () => CliEnv;
beforeAll(async () => {
  server = await startLocalServer();
  env = () => isolatedEnv({ SVC_BASE_URL: server.url, SVC_TOKEN: server.token });
});
afterAll(async () => {
  expect(await server.stop()).toEqual([]);
});

const AGENT = 'git -c user.name=a -c user.email=a@example.invalid commit -q --allow-empty -m "{key}: done"';

describe('a repository with uncommitted changes', () => {
  it('a run warns in one line before it opens, and the agents still run from HEAD', async () => {
    const repo = await makeRepo();
    writeFileSync(join(repo, 'notes.txt'), 'not committed\n');
    const r = await svcInProcess(['run', 'DEMO-6', '--agent-cmd', AGENT, '--repo', repo], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stderr.split('\n');
    const warning = lines.findIndex((l) => l.includes('uncommitted changes'));
    expect(lines[warning]).toBe(
      `warning: ${repo} has uncommitted changes (1 file): agents branch from HEAD and do not see them; commit them first if the agents need them`,
    );
    expect(warning).toBeLessThan(lines.findIndex((l) => / run run_\w+ opened /.test(l)));
    expect(lines.filter((l) => l.includes('uncommitted'))).toHaveLength(1);
  });

  it('a clean repository: no warning', async () => {
    const r = await svcInProcess(['run', 'DEMO-6', '--agent-cmd', AGENT, '--repo', await makeRepo()], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toContain('uncommitted');
  });

  it('--no-worktree is refused (exit 2, one line) and no run opens', async () => {
    const repo = await makeRepo();
    writeFileSync(join(repo, 'notes.txt'), 'not committed\n');
    const e = env();
    const r = await svcInProcess(['run', 'DEMO-6', '--agent-cmd', AGENT, '--repo', repo, '--no-worktree'], { env: e });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /^svc: .* has uncommitted changes \(1 file\) and --no-worktree checks each card's branch out in it: commit or stash them first, or run without --no-worktree\n$/,
    );
    expect(existsSync(join(e.SVC_STATE_DIR!, 'runs'))).toBe(false);
  });
});
