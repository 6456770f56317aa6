// SIGINT/SIGTERM (docs/dispatch.md). For a dispatch run the first one aborts the run — no new leg,
// agents signalled, pending events flushed, the run closed `interrupted` — and the second exits at
// once (every agent's process group killed first), leaving the run to `svc runs recover` or the
// server's reaper. Any other command exits at once with 130/143; `svc server` winds down.
import { SvcError, type FailureKind } from '../api/errors.js';

/** The abort reason the lifecycle reads to pick its exit code (130 or 143). */
export class Interrupted extends SvcError {
  override readonly name = 'Interrupted';
  constructor(readonly signal: 'SIGINT' | 'SIGTERM') {
    super(`interrupted by ${signal}`);
  }
  get kind(): FailureKind {
    return this.signal === 'SIGTERM' ? 'sigterm' : 'sigint';
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

/**
 * How a command meets SIGINT/SIGTERM. `exit` (every command that holds nothing open): exit at
 * once with 130/143, quietly. `graceful` (`svc server`): the first signal aborts, the command
 * winds down by itself. `dispatch`: the first signal aborts the run with the notice below, the
 * second exits at once after SIGKILL to every agent's process group.
 */
export type SignalMode = 'exit' | 'graceful' | 'dispatch';

export interface SignalTrap {
  /** Aborted on the first SIGINT/SIGTERM (in the graceful modes), with an `Interrupted` reason. */
  signal: AbortSignal;
  /** Set by a command before it starts work that a signal must wind down rather than cut. */
  handle(mode: SignalMode): void;
  /** Removes the handlers (call when the command ends). */
  dispose(): void;
}

// The process groups of the agents running now (each agent leads its own): a second Ctrl-C
// exits at once, but never leaves one running behind it.
const agentGroups = new Set<number>();

/** Records a running agent's process group; the returned function forgets it. */
export function trackAgentGroup(pgid: number): () => void {
  agentGroups.add(pgid);
  return () => agentGroups.delete(pgid);
}

/** SIGKILL to every tracked agent's process group (a group already gone is skipped). */
export function killAgentGroups(): number {
  let killed = 0;
  for (const pgid of agentGroups) {
    try {
      process.kill(-pgid, 'SIGKILL');
      killed++;
    } catch {
      // Gone already.
    }
  }
  agentGroups.clear();
  return killed;
}

/**
 * Installs the handlers (mode `exit` until a command says otherwise). `exit` is called with the
 * signal's exit code; `notice` tells the user what a dispatch run does after the first signal.
 */
export function trapSignals(source: SignalSource, exit: (code: number) => void, notice?: (message: string) => void): SignalTrap {
  const controller = new AbortController();
  let mode: SignalMode = 'exit';
  const onSignal = (signal: 'SIGINT' | 'SIGTERM') => () => {
    if (mode !== 'exit' && !controller.signal.aborted) {
      if (mode === 'dispatch') notice?.(`${signal}: stopping agents, sending pending events and closing the run (press Ctrl-C again to exit at once)`);
      controller.abort(new Interrupted(signal));
      return;
    }
    // Leave now; for a dispatch run the journal (with each leg's process group) lets
    // `svc runs recover` finish the job, and no agent outlives svc.
    killAgentGroups();
    if (mode === 'dispatch') notice?.('exiting at once: the run stays open until `svc runs recover` closes it (or the service reaps it)');
    exit(new Interrupted(signal).exitCode);
  };
  const onInt = onSignal('SIGINT');
  const onTerm = onSignal('SIGTERM');
  source.on('SIGINT', onInt);
  source.on('SIGTERM', onTerm);
  return {
    signal: controller.signal,
    handle(next) {
      mode = next;
    },
    dispose() {
      source.off('SIGINT', onInt);
      source.off('SIGTERM', onTerm);
    },
  };
}
