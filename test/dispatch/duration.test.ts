import { describe, expect, it } from 'vitest';
import { DurationError, parseDuration } from '../../src/dispatch/duration.js';

describe('parseDuration', () => {
  it.each([
    ['500ms', 500],
    ['5s', 5_000],
    ['2m', 120_000],
    ['1h', 3_600_000],
    ['2d', 172_800_000],
    ['90', 90_000],
    ['0', 0],
    ['1.5s', 1_500],
    ['0.25', 250],
    [' 10s ', 10_000],
    ['15M', 900_000],
    [30, 30_000],
  ] as const)('%j → %d ms', (input, ms) => {
    expect(parseDuration(input)).toBe(ms);
  });

  it.each(['', 'abc', '5 minutes', '-5s', '5w', 's', '1e3', '10sec', 'Infinity', '99999999999h'])('rejects %j with a one-line usage error', (input) => {
    let caught: unknown;
    try {
      parseDuration(input, '--idle-timeout');
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(DurationError);
    const error = caught as DurationError;
    expect(error.exitCode).toBe(2);
    expect(error.message).not.toContain('\n');
    expect(error.message).toContain('--idle-timeout');
  });
});
