// The README's getting-started block (test/support/getting-started.ts) against the built
// bin/svc.js on the test's Node 22; test/package/pack.test.ts runs it against the installed
// tarball on the machine's Node 20.
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { BIN } from '../support/cli.js';
import { expectItLanded, README, runGettingStarted } from '../support/getting-started.js';

it("the README's getting-started runs as written: a project of one's own, a token, an item, a run that lands", async () => {
  const bin = mkdtempSync(join(tmpdir(), 'svc-readme-bin-'));
  writeFileSync(join(bin, 'svc'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
  chmodSync(join(bin, 'svc'), 0o755);
  await expectItLanded(await runGettingStarted(`${bin}:${process.env.PATH}`));
}, 60_000);

it('the README is a user’s guide a newcomer reads in one sitting: at most 250 lines', () => {
  expect(README.split('\n').length).toBeLessThanOrEqual(250);
});
