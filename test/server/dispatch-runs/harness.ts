// Shared set-up of the dispatch-runs tests: the real local service over real HTTP, a few work
// items to use as cards, and a clock the tests can move (the reaper and the token expiry read it).
import type { DispatchRun, DispatchRunOpen } from '../../../src/contract/types.js';
import { mintRunCredential } from '../../../src/server/dispatch-runs/index.js';
import { startTestService, type TestService, type TestServiceOptions } from '../../support/service.js';

export interface Clock {
  now(): Date;
  advance(ms: number): void;
}

/** A clock that starts at the real time and moves only when told to. */
export function manualClock(start = new Date()): Clock {
  let t = start.getTime();
  return { now: () => new Date(t), advance: (ms) => void (t += ms) };
}

/** Keys of created items; destructuring the first few needs no `!`. */
export type Keys = string[] & { 0: string; 1: string; 2: string; 3: string; 4: string };

export interface Harness {
  svc: TestService;
  clock: Clock;
  /** Creates work items in the seeded project and returns their keys (the first five typed as present). */
  items(n: number, fields?: { targetRepo?: string; targetRepos?: string[]; targetRepositories?: string[]; parentKey?: string }): Keys;
  /** Opens a run (openDispatchRun) and returns it, failing the test on anything but 201. */
  open(body?: Partial<DispatchRunOpen>, token?: string): Promise<DispatchRun>;
  /** A second member of the workspace with an all-scopes token. */
  otherUser(): { id: string; token: string };
  /** A hosted run's own credential, minted as `svc server run-token` does. */
  runToken(runId: string): string;
}

export async function startHarness(opts: TestServiceOptions = {}): Promise<Harness> {
  const clock = manualClock();
  const svc = await startTestService({ now: clock.now, ...opts });
  let users = 0;
  const h: Harness = {
    svc,
    clock,
    items(n, fields = {}) {
      return Array.from(
        { length: n },
        (_, i) => svc.admin.createWorkItem({ projectKey: svc.projectKey, kind: 'task', title: `Card ${i + 1}`, ...fields }).key,
      ) as Keys;
    },
    async open(body = {}, token) {
      const res = await svc.call('POST', '/dispatch-runs', {
        token,
        body: { projectKey: svc.projectKey, command: 'run', ...body },
      });
      if (res.status !== 201) throw new Error(`open answered ${res.status}: ${JSON.stringify(res.body)}`);
      return res.body.run as DispatchRun;
    },
    otherUser() {
      users += 1;
      const user = svc.admin.createUser({ name: `Other ${users}`, email: `other${users}@test.example` });
      svc.admin.addMember(svc.workspaceId, user.id);
      return { id: user.id, token: svc.admin.createToken({ workspaceId: svc.workspaceId, userId: user.id }).token };
    },
    runToken: (runId) => mintRunCredential(svc.db, runId, clock.now()),
  };
  return h;
}

/** Events that move each named leg to `disposition`. */
export const moves = (disposition: string, ...keys: string[]) => keys.map((workItemKey) => ({ workItemKey, disposition }));
