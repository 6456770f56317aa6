// Flag values several commands read: one rule and one message for each, wherever it is typed.
import { UsageError } from './exit-codes.js';

/** `--max 5`, `--parallel 2`, `--limit 20`: a whole number of at least 1; undefined when absent. */
export function wholeNumber(raw: string | undefined, flag: string): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`${flag} takes a whole number of at least 1, got '${raw}'`);
  return n;
}

/** `--max-cost 2.50` or `$2.50`: an amount in USD above 0; undefined when absent. */
export function usd(raw: string | undefined, flag: string): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw.replace(/^\$/, ''));
  if (!Number.isFinite(n) || n <= 0) throw new UsageError(`${flag} takes an amount in USD above 0, got '${raw}'`);
  return n;
}
