// bin/svc.js turns on Node's compile cache in the user's cache folder (README, Benchmarks). A home
// that cannot hold it (read-only, missing, a file) must change nothing but the speed: the command
// still answers, on stdout alone, with its usual exit code.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { BIN } from '../support/cli.js';

function svc(env: Record<string, string>, ...args: string[]) {
  const scratch = mkdtempSync(join(tmpdir(), 'svc-cc-'));
  const base: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env))
    if (v !== undefined && !k.startsWith('SVC_') && !k.startsWith('NODE_') && k !== 'XDG_CACHE_HOME') base[k] = v;
  return spawnSync(process.execPath, [BIN, ...args], {
    encoding: 'utf8',
    env: { ...base, SVC_CONFIG_DIR: join(scratch, 'config'), SVC_STATE_DIR: join(scratch, 'state'), ...env },
  });
}

describe("the compile cache in the user's cache folder", () => {
  test('lands under XDG_CACHE_HOME/svc/compile-cache, else ~/.cache', () => {
    const xdg = mkdtempSync(join(tmpdir(), 'svc-xdg-'));
    expect(svc({ XDG_CACHE_HOME: xdg, HOME: '/nonexistent' }, 'config', 'set', 'project', 'PROJ')).toMatchObject({
      status: 0,
      stderr: 'project set to PROJ\n',
    });
    expect(readdirSync(join(xdg, 'svc', 'compile-cache')).length).toBeGreaterThan(0);
    const home = mkdtempSync(join(tmpdir(), 'svc-home-'));
    expect(svc({ HOME: home }, 'config', 'set', 'project', 'PROJ')).toMatchObject({ status: 0, stderr: 'project set to PROJ\n' });
    expect(existsSync(join(home, '.cache', 'svc', 'compile-cache'))).toBe(true);
  });

  // (Run as root, a read-only folder would still be written: a file where a folder must be made
  // fails the same way for every user.)
  test.each([
    [
      'a home that is a file',
      () => {
        const f = join(mkdtempSync(join(tmpdir(), 'svc-file-')), 'home');
        writeFileSync(f, '');
        return f;
      },
    ],
    [
      'a home whose .cache is a file',
      () => {
        const h = mkdtempSync(join(tmpdir(), 'svc-home-'));
        writeFileSync(join(h, '.cache'), '');
        return h;
      },
    ],
  ])('%s: the command answers as ever, nothing on stderr', (_name, home) => {
    const env = { HOME: home(), SVC_CONFIG_DIR: join(mkdtempSync(join(tmpdir(), 'svc-cfg-')), 'config') };
    expect(svc(env, 'config', 'set', 'project', 'PROJ')).toMatchObject({ status: 0, stderr: 'project set to PROJ\n' });
    const r = svc(env, 'config', 'get', 'project');
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('PROJ\n');
    expect(r.status).toBe(0);
  });
});
