// svc on a Node older than it supports (issue 11 §2): one line naming the version it needs, exit 2,
// before anything else loads. Today's failures were `TEXT_ENCODINGS.union is not a function` or
// `No such built-in module: node:sqlite`. The version is faked with --import for the older lines;
// the machine's own older node (Debian's is 20) is run as well when there is one.
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { BIN } from '../support/cli.js';

const fake = (version: string) => `data:text/javascript,Object.defineProperty(process.versions,"node",{value:"${version}"})`;

/** bin/svc.js alone, with no dist/ beside it: anything it loads after the guard fails loudly. */
function lonelyBin(): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-guard-'));
  mkdirSync(join(dir, 'bin'));
  copyFileSync(BIN, join(dir, 'bin', 'svc.js'));
  return join(dir, 'bin', 'svc.js');
}

describe('the Node version guard of bin/svc.js', () => {
  test.each(['20.20.2', '18.19.0', '22.12.0', '21.7.3'])('Node %s: one line naming Node 22.13, exit 2, nothing else loaded', (version) => {
    const r = spawnSync(process.execPath, ['--import', fake(version), lonelyBin(), 'run', 'PROJ-1'], { encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`svc: needs Node.js 22.13 or newer; this is Node.js ${version}\n`);
  });

  test.each(['22.13.0', '24.1.0'])('Node %s goes on to the program', (version) => {
    const r = spawnSync(process.execPath, ['--import', fake(version), BIN, '--version'], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^\d+\.\d+\.\d+/);
  });

  // bin/svc.js require()s the program where Node does so without a warning, and imports it on the
  // versions that would warn (22.13, 23.0–23.4): both load it.
  test.each(['22.13.0', '23.4.0', '22.14.0', '24.1.0'])('Node %s loads the program (svc --help)', (version) => {
    const r = spawnSync(process.execPath, ['--import', fake(version), BIN, '--help'], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^Usage: svc \[options\] \[command\]\n/);
  });

  const systemNode = ['/usr/bin/node', '/usr/local/bin/node'].find((p) => existsSync(p));
  const systemMajor = systemNode ? Number(execFileSync(systemNode, ['-p', 'process.versions.node.split(".")[0]'], { encoding: 'utf8' })) : 99;
  test.runIf(systemMajor < 22)(`the machine's own older node (${systemNode}) parses bin/svc.js and gets the line`, () => {
    const r = spawnSync(systemNode!, [BIN, 'demo'], { encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^svc: needs Node\.js 22\.13 or newer; this is Node\.js \d+\.\d+\.\d+\n$/);
  });
});
