// Sortable position strings for folder tree order. Positions are base-62 fractions compared as
// plain strings (byte order), so a folder can always be placed strictly between two neighbours by
// writing only its own row: no renumbering of siblings on a move.
//
// Invariant: a position is non-empty and never ends in the smallest digit '0'; without it there
// would be pairs like 'a' < 'a0' with no string between them.

const DIGITS = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const BASE = DIGITS.length;

const digit = (s: string, i: number): number => {
  const c = s[i];
  if (c === undefined) return 0;
  const d = DIGITS.indexOf(c);
  if (d < 0) throw new Error(`position ${JSON.stringify(s)} holds a character outside base 62`);
  return d;
};

/** True when `s` is a well-formed position. */
export function isPosition(s: string): boolean {
  return s.length > 0 && !s.endsWith('0') && [...s].every((c) => DIGITS.includes(c));
}

/**
 * A position strictly between `lo` and `hi` (either may be null: no bound on that side).
 * Keys stay short for the common cases: appending last bumps the last digit.
 */
export function positionBetween(lo: string | null, hi: string | null): string {
  if (lo !== null && hi !== null && lo >= hi) {
    throw new Error(`positions out of order: ${JSON.stringify(lo)} >= ${JSON.stringify(hi)}`);
  }
  if (hi === null && lo !== null) return successor(lo);
  return midpoint(lo ?? '', hi);
}

/** `n` ascending positions strictly between `lo` and `hi`, spread by bisection so they stay short. */
export function positionsBetween(lo: string | null, hi: string | null, n: number): string[] {
  if (n <= 0) return [];
  const mid = positionBetween(lo, hi);
  const left = Math.floor((n - 1) / 2);
  return [...positionsBetween(lo, mid, left), mid, ...positionsBetween(mid, hi, n - 1 - left)];
}

/** The next position after `s` with no upper bound: bump the last digit, or extend. */
function successor(s: string): string {
  const last = digit(s, s.length - 1);
  if (last < BASE - 1) return s.slice(0, -1) + DIGITS[last + 1];
  return s + DIGITS[1];
}

/** Digit-wise midpoint of `a` (possibly '') and `b` (null: +infinity); requires a < b. */
function midpoint(a: string, b: string | null): string {
  if (b !== null) {
    // Skip the common prefix (reading a missing digit of `a` as 0).
    let n = 0;
    while (n < b.length && digit(a, n) === digit(b, n)) n++;
    if (n > 0) return b.slice(0, n) + midpoint(a.slice(n), b.slice(n));
  }
  const da = a ? digit(a, 0) : 0;
  const db = b !== null ? digit(b, 0) : BASE;
  if (db - da > 1) return DIGITS[Math.round((da + db) / 2)]!;
  // Adjacent first digits: either b's first digit alone fits below b, or go one level deeper.
  if (b !== null && b.length > 1) return b.slice(0, 1);
  return DIGITS[da]! + midpoint(a.slice(1), null);
}
