// Exit codes come from the EXIT table alone: the engine's errors name a kind of failure, and
// `exitCodeFor` is the one place a kind becomes the number README.md#exit-codes documents.
import { describe, expect, test } from 'vitest';
import { EXIT, exitCodeFor, SvcError, type FailureKind } from '../../../src/api/errors.js';
import { AgentChoiceError } from '../../../src/dispatch/agent/presets.js';
import { ArgvError } from '../../../src/dispatch/agent/argv.js';
import { DurationError } from '../../../src/dispatch/duration.js';
import { CancelRefusedError } from '../../../src/dispatch/state/runs.js';
import { RunClosedError } from '../../../src/dispatch/ports.js';
import { ReportSpecError } from '../../../src/dispatch/report/index.js';
import { RunNotFoundLocallyError } from '../../../src/dispatch/report/model.js';
import { RunLockedError } from '../../../src/dispatch/state/run-lock.js';
import { SelectionError } from '../../../src/dispatch/select/types.js';
import { Interrupted } from '../../../src/dispatch/signals.js';
import { LocalStateError, UnsafeRunIdError } from '../../../src/dispatch/state/folder.js';

// The numbers as README.md#configuration writes them, not read back from the table under test.
const DOCUMENTED: Record<FailureKind, number> = {
  failed: 1,
  usage: 2,
  auth: 3,
  notFound: 4,
  unavailable: 5,
  entitlement: 6,
  sigint: 130,
  sigterm: 143,
};

describe('every kind maps to its documented number', () => {
  test.each(Object.entries(DOCUMENTED) as Array<[FailureKind, number]>)('%s -> %i', (kind, code) => {
    class Some extends SvcError {
      readonly kind = kind;
    }
    const error = new Some('x');
    expect(exitCodeFor(error)).toBe(code);
    expect(EXIT[kind]).toBe(code);
    // Whatever reads `exitCode` off a thrown error gets the same answer.
    expect(error.exitCode).toBe(code);
  });
});

test.each([
  ['AgentChoiceError', new AgentChoiceError('x'), 2],
  ['ArgvError', new ArgvError('x'), 2],
  ['DurationError', new DurationError('5 parsecs'), 2],
  ['ReportSpecError', new ReportSpecError('x'), 2],
  ['SelectionError', new SelectionError('x'), 2],
  ['UnsafeRunIdError', new UnsafeRunIdError('../..'), 2],
  ['RunNotFoundLocallyError', new RunNotFoundLocallyError('x'), 4],
  ['CancelRefusedError', new CancelRefusedError('x'), 1],
  ['LocalStateError', new LocalStateError('x'), 1],
  ['RunClosedError', new RunClosedError('run_1'), 1],
  ['RunLockedError', new RunLockedError('run_1', { pid: 1, start: null }), 1],
  ['Interrupted by SIGINT', new Interrupted('SIGINT'), 130],
  ['Interrupted by SIGTERM', new Interrupted('SIGTERM'), 143],
] as const)('%s exits %i', (_name, error, code) => {
  expect(error).toBeInstanceOf(SvcError);
  expect(exitCodeFor(error)).toBe(code);
});
