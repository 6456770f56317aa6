import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { Interrupted, interruptionExitCode, trapSignals } from '../../src/dispatch/signals.js';

// A trap on a stand-in process that records the exit codes it asks for and the notices it prints.
function trapped() {
  const proc = new EventEmitter();
  const exits: number[] = [];
  const notices: string[] = [];
  const trap = trapSignals(
    proc,
    (c) => exits.push(c),
    (m) => notices.push(m),
  );
  return { proc, exits, notices, trap };
}

describe('trapSignals', () => {
  it('aborts on the first SIGINT and exits 130 at once on the second', () => {
    const { proc, exits, notices, trap } = trapped();
    trap.handle('dispatch');
    proc.emit('SIGINT');
    expect(trap.signal.aborted).toBe(true);
    expect(interruptionExitCode(trap.signal.reason)).toBe(130);
    expect(exits).toEqual([]);
    expect(notices).toHaveLength(1);
    proc.emit('SIGINT');
    expect(exits).toEqual([130]);
    // The run is left open: the second notice says what closes it.
    expect(notices[1]).toBe('exiting at once: the run stays open until `svc runs recover` closes it (or the service reaps it)');
    trap.dispose();
    expect(proc.listenerCount('SIGINT')).toBe(0);
    expect(proc.listenerCount('SIGTERM')).toBe(0);
  });

  it('SIGTERM gives 143; other abort reasons give no signal exit code', () => {
    const proc = new EventEmitter();
    const trap = trapSignals(proc, () => {});
    trap.handle('graceful');
    proc.emit('SIGTERM');
    expect(trap.signal.reason).toBeInstanceOf(Interrupted);
    expect(interruptionExitCode(trap.signal.reason)).toBe(143);
    expect(interruptionExitCode(new Error('x'))).toBeNull();
    trap.dispose();
  });

  it('a command that holds nothing open exits at once on the first signal, quietly', () => {
    const { proc, exits, notices, trap } = trapped();
    proc.emit('SIGTERM');
    expect(exits).toEqual([143]);
    expect(notices).toEqual([]);
    trap.dispose();
  });

  it('graceful (svc server): the first signal aborts with no dispatch notice', () => {
    const { proc, exits, notices, trap } = trapped();
    trap.handle('graceful');
    proc.emit('SIGINT');
    expect(trap.signal.aborted).toBe(true);
    expect(exits).toEqual([]);
    expect(notices).toEqual([]);
    trap.dispose();
  });
});
