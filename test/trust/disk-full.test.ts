// A full state folder: a 300 KB tmpfs holds the state of a run whose agent writes far
// more than that. svc names the cause, closes the run on the service (the close needs no disk),
// and the summary never reads "halted · running".
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createAdmin } from '../../src/server/admin.js';
import { openDatabase, type Database } from '../../src/server/db.js';
import { MODULES } from '../../src/server/modules.js';
import { isolatedEnv, makeRepo, runCli } from '../support/cli.js';
import { startLocalServer, type LocalServer } from '../support/server-process.js';
import { rowsOf } from './soak-harness.js';

let server: LocalServer;
let db: Database;
let stateDir: string;
let mounted = false;
let why = '';

beforeAll(async () => {
  const home = mkdtempSync(join(tmpdir(), 'svc-diskfull-'));
  stateDir = join(home, 'state');
  mkdirSync(stateDir);
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=300k', 'tmpfs', stateDir], { encoding: 'utf8' });
  mounted = r.status === 0;
  why = r.error?.message ?? r.stderr;
  if (!mounted) return;
  server = await startLocalServer();
  db = openDatabase(server.db, MODULES);
});

afterAll(async () => {
  if (!mounted) return;
  db?.close();
  await server?.stop();
  execFileSync('umount', [stateDir]);
});

test('a 300 KB state folder fills up: the cause is named, the run is closed halted/failed, not left running', async (t) => {
  if (!mounted) {
    console.warn(`skipped: cannot mount a tmpfs here (${why.trim()}); this test needs root`);
    t.skip();
    return;
  }
  const home = join(stateDir, '..');
  const agent = join(home, 'chatty.sh');
  writeFileSync(
    agent,
    `#!/bin/sh
for i in $(seq 1 6000); do echo "line $i of a chatty agent writing plenty of output to fill the disk"; done
`,
  );
  chmodSync(agent, 0o755);
  const keys = [1, 2].map((i) => createAdmin(db).createWorkItem({ projectKey: 'DEMO', kind: 'task', title: `disk card ${i}`, type: 'chore' }).key);
  const env = {
    ...isolatedEnv({ SVC_BASE_URL: server.url, SVC_TOKEN: server.token, SVC_PROJECT: 'DEMO' }),
    HOME: home,
    SVC_CONFIG_DIR: join(home, 'config'),
    SVC_STATE_DIR: stateDir,
  };
  const before = new Set(rowsOf(db).map((r) => r.id));
  const r = await runCli(['run', ...keys, '--agent-cmd', `sh ${agent}`, '--allow-empty', '--send-logs', '--repo', await makeRepo()], { env });
  expect(r.code, r.stderr).toBe(1);
  expect(r.stderr).toContain(`no space left on the state folder ${stateDir}`);
  const shown = `${r.stdout}${r.stderr}`;
  expect(shown).not.toMatch(/· running/);
  expect(shown).toMatch(/· halted · failed/);
  // The card that ran is in the summary, failed; the next was never reached.
  expect(shown).toMatch(new RegExp(`${keys[0]}\\s+failed`));
  expect(r.stderr).not.toMatch(/^\s+at /m);
  const rows = rowsOf(db).filter((x) => !before.has(x.id));
  expect(rows.map((x) => [x.status, x.stop_reason])).toEqual([['failed', 'halted']]);
}, 60_000);
