// Durations as flags and environment variables take them (README.md#configuration): `500ms`, `5s`, `2m`,
// `1h`, `2d` (days: `runs report --since 2d`), or a plain number of seconds. One parser, so every timeout flag reads the same way.
import { SvcError } from '../api/errors.js';

/** A duration that cannot be read: a usage error (exit code 2), with a one-line message. */
export class DurationError extends SvcError {
  override readonly name = 'DurationError';
  readonly kind = 'usage';
  constructor(
    readonly input: string,
    readonly option?: string,
  ) {
    super(`invalid duration ${JSON.stringify(input)}${option ? ` for ${option}` : ''}: ` + 'use 500ms, 5s, 2m, 1h, 2d or a number of seconds');
  }
}

const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const PATTERN = /^(\d+(?:\.\d+)?|\.\d+)\s*(ms|s|m|h|d)?$/i;

/**
 * Parse a duration into whole milliseconds. `option` names the flag or variable in the error.
 * A number (already parsed config) is taken as seconds, like a bare numeric string.
 */
export function parseDuration(value: string | number, option?: string): number {
  const text = String(value).trim();
  const match = PATTERN.exec(text);
  if (!match) throw new DurationError(String(value), option);
  const amount = Number(match[1]);
  const unit = (match[2]?.toLowerCase() ?? 's') as keyof typeof UNIT_MS;
  const ms = Math.round(amount * UNIT_MS[unit]);
  // Large enough to overflow a timer is as useless as a typo: setTimeout clamps above 2^31-1.
  if (!Number.isFinite(ms) || ms > 2_147_483_647) throw new DurationError(String(value), option);
  return ms;
}
