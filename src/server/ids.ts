// Identifiers and secrets of the local service. Ids are short random base62 strings; tokens are
// shown once and stored only as SHA-256, so a copied database does not leak usable credentials.
import { createHash, randomBytes } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** `n` random base62 characters (rejection sampling keeps the distribution uniform). */
export function randomBase62(n: number): string {
  let out = '';
  while (out.length < n) {
    for (const byte of randomBytes(n * 2)) {
      if (byte < 248) out += ALPHABET[byte % 62];
      if (out.length === n) break;
    }
  }
  return out;
}

/** A new internal id, e.g. `ws_3k9…`. */
export const newId = (prefix: string): string => `${prefix}_${randomBase62(16)}`;

/** A raw secret token: the prefix plus 32 base62 characters. */
export const mintSecret = (prefix: string): string => `${prefix}${randomBase62(32)}`;

export const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** ISO 8601 UTC with milliseconds, the format every stored timestamp uses (sorts as text). */
export const iso = (d: Date): string => d.toISOString();
