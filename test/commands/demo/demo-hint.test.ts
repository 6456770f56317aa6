// The demo's closing hint names a command that works where it is printed (src/commands/demo/how-to-run.ts).
import { chmodSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { howToRun } from '../../../src/commands/demo/how-to-run.js';
import { BIN } from '../../support/cli.js';

describe('how the demo says to run svc', () => {
  it('svc, when that name on PATH is this very program', () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-hint-'));
    symlinkSync(BIN, join(dir, 'svc'));
    expect(howToRun({ PATH: `${dir}:/usr/bin` }, BIN)).toBe('svc');
  });
  it('npx svc under npm run, where svc on PATH is another program or none', () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-hint-'));
    writeFileSync(join(dir, 'svc'), '#!/bin/sh\necho another svc\n');
    chmodSync(join(dir, 'svc'), 0o755);
    expect(howToRun({ PATH: `${dir}:/usr/bin`, npm_lifecycle_event: 'demo' }, BIN)).toBe('npx svc');
  });
  it('this Node and this bin, spelled out, anywhere else', () => {
    expect(howToRun({ PATH: '/usr/bin' }, BIN, '/opt/node22/bin/node')).toBe(`/opt/node22/bin/node ${BIN}`);
  });
});
