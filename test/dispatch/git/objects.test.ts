// objectsPresent answers what `git cat-file -e` answers wherever it answers at all, and null (ask
// git) where git's files do not say it plainly.
import { execFileSync } from 'node:child_process';
import { mkdtemp, readdir, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { objectsPresent } from '../../../src/dispatch/git/objects.js';
import { commit, git } from '../../support/git-commits.js';

let dir: string;
let repo: string;

/** What git says: the shas `git cat-file -e` finds. */
function gitHas(cwd: string, shas: string[]): Set<string> {
  return new Set(
    shas.filter((sha) => {
      try {
        execFileSync('git', ['cat-file', '-e', sha], { cwd, stdio: 'ignore' });
        return true;
      } catch {
        return false;
      }
    }),
  );
}

/** A commit made in another repository, never fetched here. */
async function foreign(): Promise<string> {
  const other = join(dir, `other-${Math.random().toString(36).slice(2)}`);
  git(dir, 'init', '-q', '-b', 'main', other);
  return commit(other, 'elsewhere');
}

beforeEach(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), 'svc-objects-')));
  repo = join(dir, 'repo');
  git(dir, 'init', '-q', '-b', 'main', repo);
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('objectsPresent', () => {
  it('finds loose commits and says which are missing, as git does', async () => {
    const mine = [await commit(repo, 'a'), await commit(repo, 'b')];
    const theirs = await foreign();
    const asked = [...mine, theirs];
    expect(objectsPresent(join(repo, '.git'), asked)).toEqual(gitHas(repo, asked));
    expect(objectsPresent(join(repo, '.git'), asked)).toEqual(new Set(mine));
  });

  it('finds packed commits through the pack index, across several packs and with loose ones beside them', async () => {
    const packed: string[] = [];
    for (let i = 0; i < 40; i++) packed.push(await commit(repo, `p${i}`));
    git(repo, 'gc', '-q');
    const second: string[] = [];
    for (let i = 0; i < 5; i++) second.push(await commit(repo, `q${i}`));
    git(repo, 'repack', '-q');
    const loose = await commit(repo, 'loose');
    const packs = (await readdir(join(repo, '.git', 'objects', 'pack'))).filter((f) => f.endsWith('.idx'));
    expect(packs.length).toBe(2);
    const missing = [await foreign(), await foreign()];
    const asked = [...packed, ...second, loose, ...missing];
    const found = objectsPresent(join(repo, '.git'), asked);
    expect(found).toEqual(gitHas(repo, asked));
    expect(found?.size).toBe(asked.length - 2);
    // Names that share a first byte with a packed one but are not in it: the search ends empty.
    const near = packed.map((sha) => `${sha.slice(0, 39)}${sha[39] === '0' ? '1' : '0'}`).filter((sha) => !packed.includes(sha));
    expect(objectsPresent(join(repo, '.git'), near)).toEqual(gitHas(repo, near));
  });

  it('leaves to git what its files do not say plainly', async () => {
    const sha = await commit(repo, 'a');
    const common = join(repo, '.git');
    // A SHA-256 name, or anything that is not a name.
    expect(objectsPresent(common, ['a'.repeat(64)])).toBeNull();
    expect(objectsPresent(common, ['HEAD'])).toBeNull();
    // Objects borrowed from another repository.
    const borrower = join(dir, 'borrower');
    git(dir, 'clone', '-q', '--shared', repo, borrower);
    expect(objectsPresent(join(borrower, '.git'), [sha])).toBeNull();
    // A partial clone, whose missing objects git may fetch on demand.
    git(repo, 'gc', '-q');
    await writeFile(join(common, 'objects', 'pack', 'pack-0000000000000000000000000000000000000000.promisor'), '');
    expect(objectsPresent(common, [sha])).toBeNull();
  });

  it('many tips in many packs are left to git: one process costs less than that many searches', async () => {
    for (let i = 0; i < 3; i++) {
      await commit(repo, `p${i}`);
      git(repo, 'repack', '-q');
    }
    const common = join(repo, '.git');
    const theirs = await foreign();
    // 3 packs: 85 tips none of them holds are searched for in each (255 searches), 86 are not.
    expect(objectsPresent(common, Array(85).fill(theirs))).toEqual(new Set());
    expect(objectsPresent(common, Array(86).fill(theirs))).toBeNull();
  });

  it('an index git would not write (an old version, cut short) is left to git', async () => {
    const sha = await commit(repo, 'a');
    const pack = join(repo, '.git', 'objects', 'pack');
    git(repo, 'gc', '-q');
    expect(objectsPresent(join(repo, '.git'), [sha])).toEqual(new Set([sha]));
    await writeFile(join(pack, 'pack-1111111111111111111111111111111111111111.idx'), Buffer.from([0xff, 0x74, 0x4f, 0x63, 0, 0, 0, 2, 0]));
    expect(objectsPresent(join(repo, '.git'), [await foreign()])).toBeNull();
    await writeFile(join(pack, 'pack-1111111111111111111111111111111111111111.idx'), Buffer.alloc(2048));
    expect(objectsPresent(join(repo, '.git'), [await foreign()])).toBeNull();
  });
});
