// exitCodeOf is the one place a command's end becomes svc's exit code (README.md#exit-codes): a signal,
// commander's own ends, any other error through the API layer's table, or the code the command set.
import { describe, expect, test } from 'vitest';
import { ApiError } from '../../src/api/errors.js';
import { exitCodeOf, type CommandEnd, UsageError } from '../../src/commands/exit-codes.js';

const commander = (code: string, exitCode = 1) => Object.assign(new Error(code), { code, exitCode });
const api = (status: number) =>
  new ApiError({ status, code: null, message: 'x', requestId: 'r', operationId: 'getMe', method: 'GET', path: '/me', ambiguous: false });

describe('exitCodeOf', () => {
  test.each<[string, CommandEnd, number]>([
    ['no code set', { exitCode: undefined }, 0],
    ['the run failed', { exitCode: 1 }, 1],
    ['SIGINT', { signal: 'SIGINT' }, 130],
    ['SIGTERM', { signal: 'SIGTERM' }, 143],
    ['--help', { error: commander('commander.helpDisplayed', 0) }, 0],
    ['--version', { error: commander('commander.version', 0) }, 0],
    ['an unknown option', { error: commander('commander.unknownOption') }, 2],
    ['a usage error of svc', { error: new UsageError('bad') }, 2],
    ['401', { error: api(401) }, 3],
    ['404', { error: api(404) }, 4],
    ['503', { error: api(503) }, 5],
    ['402', { error: api(402) }, 6],
    ['an unexpected error', { error: new TypeError('x') }, 1],
  ])('%s → %i', (_row, end, code) => {
    expect(exitCodeOf(end)).toBe(code);
  });
});
