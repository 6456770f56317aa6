// Where `npm test` ends and `npm run test:system` begins (test/support/system-tests.ts,
// CONTRIBUTING.md, "The suites"). A file that starts svc as a program of its own or runs whole legs
// is in test:system, so `npm test` stays a suite of one process per worker; and the whole-system
// list holds only such files, so a slow test cannot be parked there to make `npm test` look fast.
import { existsSync, globSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { expect, test } from 'vitest';
import { NEEDS_PROGRAMS, SYSTEM_TESTS, WHOLE_SYSTEM } from '../support/system-tests.js';

const ROOT = resolve(import.meta.dirname, '../..');

/** What starts svc as a program or runs whole legs, as a test file's source shows it. */
const WHOLE = [
  // The harnesses that run legs or start svc, node or the README's block.
  /support\/(engine|hosted|machine-node|getting-started|server-process)\.js'/,
  // bin/svc.js spawned: support/cli.ts's runCli, trust/support.ts's spawnSvc, or by hand.
  /\b(runCli|spawnSvc)\(/,
  /process\.execPath.{0,40}\bBIN\b/s,
];

const source = (file: string) => readFileSync(join(ROOT, file), 'utf8');
const startsSvcOrLegs = (file: string) => WHOLE.some((re) => re.test(source(file)));

test('a test file that starts svc as a program or runs whole legs is in test:system', () => {
  const files = globSync('test/**/*.test.ts', { cwd: ROOT }).filter((f) => !f.startsWith('test/agents/'));
  expect(files.length).toBeGreaterThan(150);
  const inNpmTest = files.filter((f) => !SYSTEM_TESTS.includes(f) && startsSvcOrLegs(f));
  expect(inNpmTest).toEqual([]);
});

test('the whole-system list holds only files that start svc or run legs, each listed once', () => {
  expect(WHOLE_SYSTEM.filter((f) => !existsSync(join(ROOT, f)))).toEqual([]);
  expect(WHOLE_SYSTEM.filter((f) => !startsSvcOrLegs(f))).toEqual([]);
  expect(NEEDS_PROGRAMS.filter((f) => WHOLE_SYSTEM.includes(f))).toEqual([]);
  expect(new Set(SYSTEM_TESTS).size).toBe(SYSTEM_TESTS.length);
});

test('the rule sees a spawn and not a mention: demo-hint names bin/svc.js without starting it', () => {
  expect(startsSvcOrLegs('test/commands/demo/demo-hint.test.ts')).toBe(false);
  expect(startsSvcOrLegs('test/ui/pipe.test.ts')).toBe(true);
});
