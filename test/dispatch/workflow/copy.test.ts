// copy: (src/dispatch/workflow/copy.ts): what is copied, and what never is. svc's own writes refuse
// a link on the way and a file already there; as the agent user the writing process has the agent's
// rights only, and overwrites nothing either.
import { chmodSync, chownSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { lookupUser } from '../../../src/dispatch/boundary/user.js';
import { copyFiles, filesToCopy, type StepPlace } from '../../../src/dispatch/workflow/copy.js';
import { makeRepo } from '../../support/cli.js';

const own = (cwd: string): StepPlace => ({ cwd, user: null, env: (e) => e });
const dir = () => mkdtempSync(join(tmpdir(), 'svc-wf-copy-'));

describe('copy', () => {
  test('the globs name untracked files only (ignored ones included), from the repository root', async () => {
    const repo = await makeRepo();
    writeFileSync(join(repo, '.gitignore'), '.env\n');
    writeFileSync(join(repo, '.env'), 'A=1\n');
    writeFileSync(join(repo, '.env.test'), 'B=1\n');
    mkdirSync(join(repo, 'sub'));
    writeFileSync(join(repo, 'sub', '.env'), 'C=1\n');
    const { files } = await filesToCopy(join(repo, 'sub'), ['.env*', 'sub/.env']);
    expect(files.sort()).toEqual(['.env', '.env.test', 'sub/.env']);
  });

  test("svc's own write refuses a link at the file or on its way, and a file already there", async () => {
    const src = dir();
    writeFileSync(join(src, 'a'), 'secret\n');
    const target = join(dir(), 'target');
    writeFileSync(target, 'untouched\n');
    const leg = dir();
    symlinkSync(target, join(leg, 'a'));
    mkdirSync(join(src, 'conf'));
    writeFileSync(join(src, 'conf', 'b'), 'secret\n');
    symlinkSync(dir(), join(leg, 'conf'));
    writeFileSync(join(src, 'c'), 'new\n');
    writeFileSync(join(leg, 'c'), 'old\n');
    const { copied, lines } = await copyFiles(own(leg), src, ['a', 'conf/b', 'c']);
    expect(copied).toEqual([]);
    expect(lines).toEqual([
      'not copied a: it is already there',
      expect.stringMatching(/^not copied conf\/b: .*is not a plain folder$/),
      'not copied c: it is already there',
    ]);
    expect(readFileSync(target, 'utf8')).toBe('untouched\n');
    expect(readFileSync(join(leg, 'c'), 'utf8')).toBe('old\n');
  });

  test.skipIf(process.getuid?.() !== 0)('as the agent user: written by that user, never over what is there', async () => {
    const ids = await lookupUser('nobody');
    const src = dir();
    writeFileSync(join(src, '.env'), 'A=1\n', { mode: 0o600 });
    mkdirSync(join(src, 'deep'));
    writeFileSync(join(src, 'deep', '.env'), 'B=1\n');
    writeFileSync(join(src, 'kept'), 'new\n');
    const leg = dir();
    writeFileSync(join(leg, 'kept'), 'old\n');
    chmodSync(leg, 0o777);
    const { copied } = await copyFiles({ cwd: leg, user: ids!, env: (e) => e }, src, ['.env', 'deep/.env', 'kept']);
    expect(copied).toEqual(['.env', 'deep/.env']);
    expect(lstatSync(join(leg, '.env')).uid).toBe(ids!.uid);
    expect(lstatSync(join(leg, 'deep', '.env')).uid).toBe(ids!.uid);
    expect(readFileSync(join(leg, 'kept'), 'utf8')).toBe('old\n');
    expect(existsSync(join(leg, 'deep'))).toBe(true);
  });

  test('reads through no link in the checkout: a linked folder or file is not copied', async () => {
    const src = dir();
    const outside = dir();
    writeFileSync(join(outside, 'secret.env'), 'OUTSIDE=1\n');
    symlinkSync(outside, join(src, 'linked'));
    symlinkSync(join(outside, 'secret.env'), join(src, '.env'));
    const leg = dir();
    const { copied, lines } = await copyFiles(own(leg), src, ['linked/secret.env', '.env']);
    expect(copied).toEqual([]);
    expect(lines).toEqual([
      expect.stringMatching(/^not copied linked\/secret\.env: .*is not a plain folder$/),
      expect.stringMatching(/^not copied \.env: .*ELOOP/),
    ]);
    expect(existsSync(join(leg, 'linked'))).toBe(false);
  });

  test.skipIf(process.getuid?.() !== 0)("as root in another user's checkout: only what that user can read is copied", async () => {
    const ids = await lookupUser('nobody');
    const src = dir();
    writeFileSync(join(src, '.env'), 'PUBLIC=1\n', { mode: 0o644 });
    // Root's own file in the user's checkout, 0600: the checkout's owner cannot read it, so neither does the copy.
    writeFileSync(join(src, 'prod.env'), 'AWS_SECRET_ACCESS_KEY=x\n', { mode: 0o600 });
    chownSync(src, ids!.uid, ids!.gid);
    chownSync(join(src, '.env'), ids!.uid, ids!.gid);
    const leg = dir();
    const { copied, lines } = await copyFiles(own(leg), src, ['.env', 'prod.env']);
    expect(copied).toEqual(['.env']);
    expect(lines[1]).toMatch(/^not copied prod\.env: its owner cannot read it \(.*Permission denied\)$/);
    expect(readFileSync(join(leg, '.env'), 'utf8')).toBe('PUBLIC=1\n');
    expect(existsSync(join(leg, 'prod.env'))).toBe(false);
  });
});
