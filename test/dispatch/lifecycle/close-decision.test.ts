// decideClose against docs/dispatch.md, row by row: the "stops with" column of the command table,
// then "Status sent at close" and the stops that cut a run short. Pure: nothing runs.
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/api/errors.js';
import { decideClose, endedByCommand, runExitCode, type CloseState, type RunEnd } from '../../../src/dispatch/lifecycle/close-decision.js';
import { Interrupted } from '../../../src/dispatch/signals.js';

const ranOut: CloseState = { command: 'run', capped: false, timedOut: false, interrupted: false, failed: false, stop: null, failedLegs: 0 };
const state = (over: Partial<CloseState>): CloseState => ({ ...ranOut, ...over });

describe('decideClose: every command, legs all ran (docs/dispatch.md, "Why a run stops")', () => {
  it.each<[string, Partial<CloseState>, string]>([
    ['run KEY...', { command: 'run' }, 'completed'],
    ['run_scope KEY', { command: 'run_scope' }, 'completed'],
    ['next', { command: 'next' }, 'completed'],
    ['batch, the cap cut the set', { command: 'batch', capped: true }, 'max'],
    ['batch, under the cap', { command: 'batch', capped: false }, 'drained'],
    ['auto, more is ready: it loops on', { command: 'auto', moreReady: true }, 'completed'],
    ['auto, more is ready but the cap is hit', { command: 'auto', moreReady: true, capped: true }, 'max'],
    ['auto, nothing more is ready', { command: 'auto', moreReady: false }, 'drained'],
    ['auto, nothing more is ready though the cap is hit', { command: 'auto', moreReady: false, capped: true }, 'drained'],
    ['auto not asked (continued or hosted), under the cap', { command: 'auto' }, 'drained'],
    ['auto not asked (continued or hosted), cap hit', { command: 'auto', capped: true }, 'max'],
    ['fix KEY...', { command: 'fix' }, 'completed'],
    ['review KEY...', { command: 'review' }, 'completed'],
    // `continue RUN_ID` stops "as the original": the state carries the original command.
    ['continue of a run', { command: 'run' }, 'completed'],
    ['continue of a capped batch', { command: 'batch', capped: true }, 'max'],
  ])('%s → %s, succeeded', (_row, over, stopReason) => {
    expect(decideClose(state(over))).toEqual({ stopReason, status: 'succeeded' });
  });

  it.each<[string, Partial<CloseState>, string]>([
    ['run, --on-failure continue', { command: 'run', failedLegs: 1 }, 'completed'],
    ['batch, --on-failure continue', { command: 'batch', failedLegs: 2 }, 'drained'],
    ['auto, --on-failure continue', { command: 'auto', moreReady: true, failedLegs: 1 }, 'completed'],
  ])('%s with a failed leg → %s, failed', (_row, over, stopReason) => {
    expect(decideClose(state(over))).toEqual({ stopReason, status: 'failed' });
  });
});

describe('decideClose: stops that cut the run short (docs/dispatch.md, "Why a run stops")', () => {
  it.each<[string, Partial<CloseState>, string, string]>([
    ['a human card blocks the next one', { stop: 'gated' }, 'gated', 'succeeded'],
    ['gated after a failed leg (--on-failure continue)', { stop: 'gated', failedLegs: 1 }, 'gated', 'failed'],
    ['an item changed since the open', { stop: 'replanned' }, 'replanned', 'succeeded'],
    ['replanned after a failed leg', { stop: 'replanned', failedLegs: 1 }, 'replanned', 'failed'],
    ['a failed leg under --on-failure halt', { stop: 'halted', failedLegs: 1 }, 'halted', 'failed'],
    ['--max-cost reached', { stop: 'max' }, 'max', 'succeeded'],
    ['--max-cost reached with a failed leg', { stop: 'max', failedLegs: 1 }, 'max', 'failed'],
    ['SIGINT/SIGTERM', { interrupted: true }, 'interrupted', 'cancelled'],
    ['SIGINT after a failed leg halted the run', { interrupted: true, stop: 'halted', failedLegs: 1 }, 'interrupted', 'cancelled'],
    ['the whole-run --timeout', { timedOut: true }, 'interrupted', 'timed_out'],
    ['the timeout wins over the signal it raised', { timedOut: true, interrupted: true, stop: 'max' }, 'interrupted', 'timed_out'],
    ['a fault past every retry (service gone, disk full)', { failed: true }, 'halted', 'failed'],
    ['a fault while a stop was already asked', { failed: true, stop: 'gated' }, 'halted', 'failed'],
    ['a signal wins over a fault', { interrupted: true, failed: true }, 'interrupted', 'cancelled'],
    ['a fault ends auto before it asks whether more is ready', { command: 'auto', failed: true }, 'halted', 'failed'],
  ])('%s → %s, %s', (_row, over, stopReason, status) => {
    expect(decideClose(state(over))).toEqual({ stopReason, status });
  });
});

describe('endedByCommand: when the command is asked for its own stop', () => {
  it.each<[string, Partial<CloseState>, boolean]>([
    ['the legs ran out', {}, true],
    ['a failed leg under --on-failure continue', { failedLegs: 1 }, true],
    ['a stop was asked', { stop: 'gated' }, false],
    ['interrupted', { interrupted: true }, false],
    ['timed out', { timedOut: true }, false],
    ['a fault', { failed: true }, false],
  ])('%s → %s', (_row, over, expected) => {
    expect(endedByCommand(state(over))).toBe(expected);
  });
});

describe('runExitCode: how a run ended → its exit code (README.md, "Exit codes"; docs/dispatch.md, "Why a run stops")', () => {
  const unavailable = new ApiError({
    status: 503,
    code: 'unavailable',
    message: 'down',
    requestId: 'r',
    operationId: 'getDispatchRun',
    method: 'GET',
    path: '/x',
    ambiguous: false,
  });
  it.each<[string, RunEnd, number]>([
    ['succeeded', { status: 'succeeded' }, 0],
    ['failed (a leg failed)', { status: 'failed' }, 1],
    ['found already closed, failed', { status: 'failed' }, 1],
    ['found already closed, cancelled', { status: 'cancelled' }, 0],
    ['timed out', { status: 'timed_out', timedOut: true }, 1],
    ['SIGINT', { status: 'cancelled', interrupted: { reason: new Interrupted('SIGINT') } }, 130],
    ['SIGTERM', { status: 'cancelled', interrupted: { reason: new Interrupted('SIGTERM') } }, 143],
    ['aborted for another reason (a test)', { status: 'cancelled', interrupted: { reason: new Error('x') } }, 130],
    ['interrupted before the run opened', { status: null, interrupted: { reason: new Interrupted('SIGTERM') } }, 143],
    ['the timeout wins over the signal', { status: 'timed_out', timedOut: true, interrupted: { reason: new Interrupted('SIGINT') } }, 1],
    ['the service gone past every retry', { status: 'failed', failure: unavailable }, 5],
    ['a signal wins over a fault', { status: 'cancelled', failure: unavailable, interrupted: { reason: new Interrupted('SIGINT') } }, 130],
  ])('%s → %i', (_row, end, code) => {
    expect(runExitCode(end)).toBe(code);
  });
});
