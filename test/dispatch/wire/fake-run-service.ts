// An in-memory double of OUR port (not of HTTP) for the streamer and heartbeat unit tests: it
// stores appended events with seqs like the service does, and lets a test inject faults per call.
import type { DispatchEventInput, DispatchEventsAppended, DispatchRun } from '../../../src/contract/types.js';
import type { DispatchService } from '../../../src/dispatch/ports.js';

export type Fault = 'ambiguous-stored' | 'ambiguous-lost' | 'unavailable' | 'closed' | 'invalid';

export function apiError(status: number, ambiguous: boolean, code: string | null = null): Error {
  return Object.assign(new Error(`fake ${status}`), { status, ambiguous, code });
}

export class FakeRunService implements Pick<DispatchService, 'appendDispatchEvents' | 'getDispatchRun' | 'heartbeatDispatchRun'> {
  stored: DispatchEventInput[] = [];
  status = 'running';
  /** Faults to apply to the next appends, in order. */
  appendFaults: Fault[] = [];
  heartbeatFaults: Fault[] = [];
  appendDelayMs = 0;
  inFlight = 0;
  maxInFlight = 0;
  batchSizes: number[] = [];
  reads = 0;
  beats = 0;

  async appendDispatchEvents(runId: string, body: { events: DispatchEventInput[] }): Promise<DispatchEventsAppended> {
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      if (this.appendDelayMs) await new Promise((r) => setTimeout(r, this.appendDelayMs));
      if (body.events.length > 200) throw apiError(422, false, 'INVALID_REQUEST');
      if (this.status !== 'running') throw apiError(409, false, 'RUN_CLOSED');
      this.batchSizes.push(body.events.length);
      const fault = this.appendFaults.shift();
      if (fault === 'closed') {
        this.status = 'succeeded';
        throw apiError(409, false, 'RUN_CLOSED');
      }
      if (fault === 'unavailable') throw apiError(503, false, 'UNAVAILABLE');
      if (fault === 'invalid') throw apiError(422, false, 'INVALID_REQUEST');
      if (fault === 'ambiguous-lost') throw apiError(0, true);
      this.stored.push(...body.events);
      if (fault === 'ambiguous-stored') throw apiError(0, true);
      return { runId, appended: body.events.length, seq: this.stored.length, cards: [] };
    } finally {
      this.inFlight--;
    }
  }

  async getDispatchRun(id: string): Promise<DispatchRun> {
    this.reads++;
    return {
      id,
      projectId: 'p',
      command: 'run',
      origin: 'local',
      scopeWorkItemId: null,
      scopeLabel: null,
      status: this.status,
      stopReason: null,
      agent: null,
      model: null,
      startedAt: new Date().toISOString(),
      endedAt: null,
      lastHeartbeatAt: null,
      createdById: null,
      agentInstance: null,
      cards: [],
      seq: this.stored.length,
    };
  }

  async heartbeatDispatchRun(): Promise<void> {
    const fault = this.heartbeatFaults.shift();
    if (fault === 'closed' || this.status !== 'running') throw apiError(409, false, 'RUN_CLOSED');
    if (fault === 'unavailable') throw apiError(503, false, 'UNAVAILABLE');
    this.beats++;
  }
}
