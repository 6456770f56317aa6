// What stops a run from outside its legs: the user's signal, the whole-run timeout, the service
// closing the run (a 409 to a beat or an append), or a fault past every retry (the service gone
// longer than --max-wait, a full disk). Each is kept as it first happened, and every one of them
// aborts the run's signal: no new leg starts and running agents are stopped.
import type { RunClosedError } from '../ports.js';

export class RunStops {
  private readonly controller = new AbortController();
  private closedBy: RunClosedError | null = null;
  private fault: unknown = null;
  private timeout = false;

  /** Aborted by any stop: the legs' signal. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The service closed the run: nothing more may be sent but reads. */
  get closedByServer(): RunClosedError | null {
    return this.closedBy;
  }

  /** The first fault that stopped the run, or null. */
  get failure(): unknown {
    return this.fault;
  }

  get timedOut(): boolean {
    return this.timeout;
  }

  /** The user's signal stopped it: not the timeout, and not a close the service made. */
  interruptedBy(userSignal: AbortSignal): boolean {
    return userSignal.aborted && !this.timeout && !this.closedBy;
  }

  abort(reason: unknown): void {
    this.controller.abort(reason);
  }

  closed(error: RunClosedError): void {
    this.closedBy ??= error;
    this.controller.abort(error);
  }

  /** Records a fault (the first one counts). */
  failed(error: unknown): void {
    this.fault ??= error;
    this.controller.abort(this.fault);
  }

  timeoutReached(): void {
    this.timeout = true;
    this.controller.abort(new Error('run timeout'));
  }
}
