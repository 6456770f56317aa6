// Position keys of folder tree order: any sequence of inserts (first, last, between neighbours)
// keeps a strict string order with well-formed keys, so a move never has to renumber siblings.
import { describe, expect, test } from 'vitest';
import { isPosition, positionBetween, positionsBetween } from '../../../src/server/folders/positions.js';

/** A small deterministic generator, so a failure reproduces. */
function rng(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
}

describe('positionBetween', () => {
  test.each([
    [null, null],
    ['V', null],
    [null, 'V'],
    ['V', 'W'],
    ['a', 'a1'],
    ['z', null],
    [null, '01'],
    ['Vz', 'W'],
  ])('between %j and %j', (lo, hi) => {
    const p = positionBetween(lo, hi);
    expect(isPosition(p)).toBe(true);
    if (lo !== null) expect(p > lo).toBe(true);
    if (hi !== null) expect(p < hi).toBe(true);
  });

  test('refuses bounds out of order', () => {
    expect(() => positionBetween('b', 'a')).toThrow(/out of order/);
    expect(() => positionBetween('a', 'a')).toThrow(/out of order/);
  });

  test.each([[1], [2], [3]])('5,000 random inserts stay strictly ordered (seed %i)', (seed) => {
    const random = rng(seed);
    const keys: string[] = [];
    for (let i = 0; i < 5000; i++) {
      const at = Math.floor(random() * (keys.length + 1));
      const p = positionBetween(keys[at - 1] ?? null, keys[at] ?? null);
      keys.splice(at, 0, p);
    }
    for (let i = 1; i < keys.length; i++) expect(keys[i - 1]! < keys[i]!).toBe(true);
    expect(keys.every(isPosition)).toBe(true);
  });

  test('appending stays short: 1,000 folders need keys of at most 20 characters', () => {
    let last: string | null = null;
    for (let i = 0; i < 1000; i++) last = positionBetween(last, null);
    expect(last!.length).toBeLessThanOrEqual(20);
  });
});

describe('positionsBetween', () => {
  test.each([[0], [1], [7], [100]])('%i keys, ascending, inside the bounds', (count) => {
    const keys = positionsBetween('A', 'B', count);
    expect(keys).toHaveLength(count);
    const all = ['A', ...keys, 'B'];
    for (let i = 1; i < all.length; i++) expect(all[i - 1]! < all[i]!).toBe(true);
  });
});
