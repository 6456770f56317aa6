// What `svc config get` loads (issue 27): a command that reads a setting spawns nothing, so Node's
// child_process (and the net and dgram internals it pulls in) stays unloaded. Held here because the
// config store reads its user syntax from dispatch/agent/user.ts, which does spawn (`id`), later.
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { BIN, isolatedEnv } from '../support/cli.js';

test('svc config get and svc items list --help load no node:child_process', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-builtins-'));
  const probe = join(dir, 'probe.cjs');
  // Preloaded: at exit, the builtins this process loaded, one line on stderr.
  writeFileSync(probe, "process.on('exit', () => process.stderr.write('LOADED ' + process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')).map((m) => m.slice(13)).join(',') + '\\n'));\n");
  const loaded = async (args: string[]) => {
    const env = { ...process.env, ...isolatedEnv({ HOME: dir, SVC_CONFIG_DIR: join(dir, 'config') }) };
    const out = await new Promise<string>((done, fail) =>
      execFile(process.execPath, ['-r', probe, BIN, ...args], { env }, (error, _stdout, stderr) => (error && !/LOADED/.test(stderr) ? fail(error) : done(stderr))),
    );
    return (/LOADED (.*)/.exec(out)?.[1] ?? '').split(',');
  };
  const configGet = await loaded(['config', 'get', 'project']);
  // The probe itself works: the store's own modules are there.
  expect(configGet).toContain('fs');
  expect(configGet).not.toContain('child_process');
  expect(await loaded(['items', 'list', '--help'])).not.toContain('child_process');
});
