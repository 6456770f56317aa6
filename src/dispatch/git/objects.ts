// Which commits this clone has, read from git's own files instead of a `git cat-file` process: a
// fleet's worker asks it of origin's svc/* tips at every selection (docs/fleets.md, "Which card a
// worker reaches for"), and a process there is a fork of svc and a git start-up on the critical
// path between two agents. Only the plain cases are read: loose objects and version-2 pack indexes
// of SHA-1 names. Anything else (alternates, a partial clone's promisor packs, a SHA-256 name, an
// index git would not write, a read that fails) answers null, and the caller asks git.
import { closeSync, existsSync, openSync, readdirSync, readSync } from 'node:fs';
import { join } from 'node:path';

const SHA1 = /^[0-9a-f]{40}$/;
/** `\377tOc`, then the version: what every pack index since git 1.5.2 starts with. */
const IDX_MAGIC = 0xff744f63;
const FANOUT_AT = 8;
const NAMES_AT = FANOUT_AT + 256 * 4;
const NAME_LENGTH = 20;
/**
 * The most (name, pack) searches one answer makes (each a dozen small reads at most): past it one
 * `git cat-file` costs less, as in a clone of many packs asked about many tips.
 */
const MAX_SEARCHES = 256;

/**
 * Of `shas`, those whose object is in the repository whose common git dir is `common`: loose, or
 * named by one of its pack indexes. null where git's files cannot say it for certain.
 */
export function objectsPresent(common: string, shas: readonly string[]): Set<string> | null {
  if (!shas.every((sha) => SHA1.test(sha))) return null;
  const objects = join(common, 'objects');
  // Objects borrowed from another repository, or fetched on demand: only git knows.
  if (existsSync(join(objects, 'info', 'alternates'))) return null;
  let packs: string[];
  try {
    packs = readdirSync(join(objects, 'pack'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return null;
    packs = [];
  }
  if (packs.some((name) => name.endsWith('.promisor'))) return null;
  const present = new Set(shas.filter((sha) => existsSync(join(objects, sha.slice(0, 2), sha.slice(2)))));
  let missing = shas.filter((sha) => !present.has(sha));
  const indexes = packs.filter((name) => name.endsWith('.idx'));
  if (missing.length * indexes.length > MAX_SEARCHES) return null;
  for (const idx of indexes) {
    if (missing.length === 0) break;
    const found = namedIn(join(objects, 'pack', idx), missing);
    if (found === null) return null;
    for (const sha of found) present.add(sha);
    missing = missing.filter((sha) => !found.has(sha));
  }
  return present;
}

/**
 * Of `shas`, those the pack index at `path` names: its fan-out table gives the range of names
 * that start with a sha's first byte, and a binary search in it reads one name at a time, so an
 * index of millions of objects costs a few dozen small reads, not its size.
 */
function namedIn(path: string, shas: readonly string[]): Set<string> | null {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return null;
  }
  try {
    const head = Buffer.alloc(NAMES_AT);
    if (readSync(fd, head, 0, NAMES_AT, 0) !== NAMES_AT) return null;
    if (head.readUInt32BE(0) !== IDX_MAGIC || head.readUInt32BE(4) !== 2) return null;
    const found = new Set<string>();
    const name = Buffer.alloc(NAME_LENGTH);
    for (const sha of shas) {
      const want = Buffer.from(sha, 'hex');
      const first = want[0]!;
      let lo = first === 0 ? 0 : head.readUInt32BE(FANOUT_AT + (first - 1) * 4);
      let hi = head.readUInt32BE(FANOUT_AT + first * 4);
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (readSync(fd, name, 0, NAME_LENGTH, NAMES_AT + mid * NAME_LENGTH) !== NAME_LENGTH) return null;
        const order = name.compare(want);
        if (order === 0) {
          found.add(sha);
          break;
        }
        if (order < 0) lo = mid + 1;
        else hi = mid;
      }
    }
    return found;
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}
