// SIGINT/SIGTERM for a dispatch run (DISPATCH §4): the first one aborts the run — no new leg,
// agents signalled, pending events flushed, the run closed `interrupted` — and the second SIGINT
// exits at once, leaving the run to `svc runs recover` or the server's reaper.

/** The abort reason the lifecycle reads to pick its exit code (130 or 143). */
export class Interrupted extends Error {
  override readonly name = 'Interrupted';
  constructor(readonly signal: 'SIGINT' | 'SIGTERM') {
    super(`interrupted by ${signal}`);
  }
  get exitCode(): number {
    return this.signal === 'SIGTERM' ? 143 : 130;
  }
}

/** The exit code of an abort reason: 130/143 for a signal, else null. */
export function interruptionExitCode(reason: unknown): number | null {
  return reason instanceof Interrupted ? reason.exitCode : null;
}

/** The part of `process` this needs (tests pass an EventEmitter). */
export interface SignalSource {
  on(event: 'SIGINT' | 'SIGTERM', listener: () => void): unknown;
  off(event: 'SIGINT' | 'SIGTERM', listener: () => void): unknown;
}

export interface SignalTrap {
  /** Aborted on the first SIGINT/SIGTERM, with an `Interrupted` reason. */
  signal: AbortSignal;
  /** Removes the handlers (call when the command ends). */
  dispose(): void;
}

/**
 * Installs the two-stage handlers. `exit` is called on a second SIGINT (or SIGTERM) with the
 * signal's exit code; `notice` tells the user what is happening after the first.
 */
export function trapSignals(source: SignalSource, exit: (code: number) => void, notice?: (message: string) => void): SignalTrap {
  const controller = new AbortController();
  const onSignal = (signal: 'SIGINT' | 'SIGTERM') => () => {
    if (!controller.signal.aborted) {
      notice?.(`${signal}: stopping agents, sending pending events and closing the run (press Ctrl-C again to exit at once)`);
      controller.abort(new Interrupted(signal));
      return;
    }
    // Second signal: leave now; the journal lets `svc runs recover` finish the job.
    exit(new Interrupted(signal).exitCode);
  };
  const onInt = onSignal('SIGINT');
  const onTerm = onSignal('SIGTERM');
  source.on('SIGINT', onInt);
  source.on('SIGTERM', onTerm);
  return {
    signal: controller.signal,
    dispose() {
      source.off('SIGINT', onInt);
      source.off('SIGTERM', onTerm);
    },
  };
}
