// The kinds of value a flag of the run takes (table.ts): one rule and one message for each,
// wherever it is typed, and the way run.json's value of it is read back and given again.
import { SvcError } from '../../api/errors.js';
import { agentEnvNameProblem } from '../agent/env.js';
import { parseDuration } from '../duration.js';
import type { Kind } from './row.js';

/** A flag's value that cannot be taken: a usage error (exit code 2), with a one-line message. */
export class FlagValueError extends SvcError {
  override readonly name = 'FlagValueError';
  readonly kind = 'usage';
}

/** `--max 5`, `--parallel 2`, `--limit 20`: a whole number of at least 1; undefined when absent. */
export function wholeNumber(raw: string | undefined, flag: string): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new FlagValueError(`${flag} takes a whole number of at least 1, got '${raw}'`);
  return n;
}

/** `--max-cost 2.50` or `$2.50`: an amount in USD above 0; undefined when absent. */
export function usd(raw: string | undefined, flag: string): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw.replace(/^\$/, ''));
  if (!Number.isFinite(n) || n <= 0) throw new FlagValueError(`${flag} takes an amount in USD above 0, got '${raw}'`);
  return n;
}

const number = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const yes = (v: unknown): boolean | undefined => (typeof v === 'boolean' ? v : undefined);
const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** A whole number of at least 1 (`--parallel 3`). */
export const count: Kind<number> = { parse: (raw, source) => wholeNumber(String(raw), source)!, read: number, flag: String };

/** An amount in USD (`--max-cost 2.50`). */
export const dollars: Kind<number> = { parse: (raw, source) => usd(String(raw), source)!, read: number, flag: String };

/** A duration, kept in milliseconds (`--idle-timeout 2m`); given again as `120000ms`. */
export const duration: Kind<number> = {
  parse: (raw, source) => parseDuration(raw, source),
  read: number,
  flag: (ms) => (ms > 0 ? `${Math.round(ms)}ms` : undefined),
};

/** Any text (`--idempotency-key K`). */
export const words: Kind<string> = { parse: (raw) => raw, read: text, flag: (v) => v };

/** One of `values` (commander checks the flag against the row's `choices`). */
export function oneOf<const C extends string>(values: readonly C[]): Kind<C> {
  const read = (v: unknown) => values.find((c) => c === v);
  return { parse: (raw) => raw as C, read, flag: (v) => v };
}

/** A switch (`--send-logs`): false unless given. */
export const toggle: Kind<boolean, boolean> = { parse: (raw) => raw === true, read: yes, flag: (v) => v, absent: false };

/** A lone negation (`--no-worktree`): true unless given. */
export const unlessNegated: Kind<boolean, boolean> = { parse: (raw) => raw !== false, read: yes, flag: (v) => v, absent: true };

/** `--agent-env NAME …`: each a variable name, none of svc's own; each once. */
export const variableNames: Kind<string[], string[]> = {
  parse(names, source) {
    for (const name of names) {
      const problem = agentEnvNameProblem(name);
      if (problem) throw new FlagValueError(`${source} ${name}: ${problem}`);
    }
    return [...new Set(names)];
  },
  read: (v) => (Array.isArray(v) ? v.filter((n): n is string => typeof n === 'string') : undefined),
  flag: (v) => v,
};
