// The rig every wire test of the client uses: the real local service, the fault proxy in front of
// it, and clients pointed at the proxy whose waits are recorded instead of slept (unless a test
// wants the real clock).
import { createApiClient, type ApiClient, type ClientOptions, type RequestInfo } from '../../src/api/index.js';
import type { Scope, WorkItemDetail } from '../../src/contract/types.js';
import { mintRunCredential } from '../../src/server/dispatch-runs/index.js';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.js';
import { startTestService } from '../support/service.js';
import { afterAll, beforeAll } from 'vitest';

export interface Harness {
  proxy: FaultProxy;
  /** A token with every scope, straight from the service. */
  token: string;
  /** The seeded project's key. */
  projectKey: string;
  /** Every wait the clients asked for, in ms (their `sleep` records instead of sleeping). */
  sleeps: number[];
  /** Every attempt the clients reported through `onRequest`. */
  infos: RequestInfo[];
  /** A client through the proxy; options override the defaults. */
  client(over?: Partial<ClientOptions>): ApiClient;
  /** A client straight to the service, for arranging state without touching the proxy's record. */
  direct: ApiClient;
  /** A personal access token of the same user and workspace with only these scopes. */
  tokenWithScopes(scopes: Scope[]): Promise<string>;
  /** A hosted run's own credential (`svc_run_...`), minted out of band as the platform would. */
  mintRunCredential(runId: string): string;
  /** Creates a task in the seeded project (directly) and returns it. */
  newTask(title?: string): Promise<WorkItemDetail>;
  /** Clears the plan, the proxy's record, the waits and the infos. */
  reset(): void;
  close(): Promise<void>;
}

export async function startHarness(): Promise<Harness> {
  const service = await startTestService();
  const proxy = await startFaultProxy({ target: service.url, seed: 42 });
  const sleeps: number[] = [];
  const infos: RequestInfo[] = [];
  const clients: ApiClient[] = [];
  const make = (over: Partial<ClientOptions> = {}): ApiClient => {
    const api = createApiClient({
      baseUrl: proxy.url,
      token: service.token,
      version: 'test',
      sleep: async (ms) => {
        sleeps.push(ms);
      },
      onRequest: (info) => infos.push(info),
      ...over,
    });
    clients.push(api);
    return api;
  };
  const direct = createApiClient({ baseUrl: service.url, token: service.token, version: 'test' });
  clients.push(direct);
  const projects = await direct.listProjects();
  const projectKey = projects.items[0]?.key;
  if (!projectKey) throw new Error('the test service seeded no project');
  let made = 0;

  return {
    proxy,
    token: service.token,
    projectKey,
    sleeps,
    infos,
    direct,
    client: make,
    async tokenWithScopes(scopes) {
      const me = await direct.getMe();
      return service.admin.createToken({ workspaceId: me.workspaceId, userId: me.user.id, scopes }).token;
    },
    mintRunCredential: (runId) => mintRunCredential(service.admin.db, runId),
    newTask: (title) => direct.createWorkItem(projectKey, { kind: 'task', title: title ?? `task ${++made}` }),
    reset() {
      proxy.setPlan([]);
      proxy.clearSeen();
      sleeps.length = 0;
      infos.length = 0;
    },
    async close() {
      await Promise.all(clients.map((c) => c.close()));
      await proxy.close();
      await service.close();
    },
  };
}

/** One rig for the whole calling file (beforeAll), closed after its last test (afterAll), as every wire test file has it. */
export function harnessForFile(): Harness {
  const h = {} as Harness;
  beforeAll(async () => {
    Object.assign(h, await startHarness());
  });
  afterAll(async () => {
    await h.close?.();
  });
  return h;
}

/** Runs `fn` and returns what it threw (failing the test when it did not throw). */
export async function caught(fn: () => Promise<unknown>): Promise<unknown> {
  try {
    await fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail, and it succeeded');
}
