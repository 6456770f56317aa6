// svc on a Node older than it supports: one line naming the version it needs, exit 2,
// before anything else loads. Today's failures were `TEXT_ENCODINGS.union is not a function` or
// `No such built-in module: node:sqlite`. The version is faked with --import for the older lines;
// the machine's own Node 20 (Debian's) is run as well. `svc` run as a program never gets here on
// Node 20: its shell preamble execs the package's Node 22 (test/package/launcher.test.ts).
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { BIN } from '../support/cli.js';
import { machineNode20 } from '../support/machine-node.js';

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

  // The machine's own Node 20 (test/support/machine-node.ts: missing, this fails rather than skips).
  test("the machine's own Node 20 parses bin/svc.js and gets the line", () => {
    const r = spawnSync(machineNode20(), [BIN, 'demo'], { encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^svc: needs Node\.js 22\.13 or newer; this is Node\.js 20\.\d+\.\d+\n$/);
  });
});
