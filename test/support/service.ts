// The local service as every test uses it: in-process, on a random port, memory database, one
// seeded workspace with a project and a member holding an all-scopes token. Every response is
// validated against the contract document and close() throws listing the violations, so any test
// using the service checks the document for free.
import type { ServiceConfig } from '../../src/server/kernel.js';
import { startServer, type Admin, type LocalService, type ResponseInfo } from '../../src/server/index.js';
import { CONTRACT_HOOKS as hooks } from '../../src/server/contract-hooks.js';
import type { Database } from '../../src/server/db.js';
import { afterAll, beforeAll } from 'vitest';

export interface TestServiceOptions {
  config?: Partial<ServiceConfig>;
  dbFile?: string;
  /** Key of the seeded project (default `PROJ`). */
  projectKey?: string;
  /** Also seed the demo workspace (`acme`, project DEMO). */
  seed?: 'demo';
  /** Validate every response against the contract (default true). */
  validate?: boolean;
  now?: () => Date;
  /** Where the server logs unexpected faults (default stderr). */
  logError?: (line: string) => void;
  /** Receives every response as well. */
  onResponse?: (info: ResponseInfo) => void;
}

export interface TestService {
  url: string;
  /** Base of the API: `${url}/api/v1`. */
  api: string;
  admin: Admin;
  db: Database;
  service: LocalService;
  /** Token with every scope for the seeded user, bound to the seeded workspace. */
  token: string;
  workspaceId: string;
  userId: string;
  projectKey: string;
  /** Contract violations seen so far (close() throws when any). */
  violations: string[];
  /** One HTTP request to the API (path below /api/v1); the token defaults to `token`. */
  call(method: string, path: string, opts?: CallOptions): Promise<CallResult>;
  close(): Promise<void>;
}

export interface CallOptions {
  /** A token, or null for no Authorization header. */
  token?: string | null;
  /** JSON-encoded unless `raw` is set. */
  body?: unknown;
  raw?: string;
  headers?: Record<string, string>;
}

export interface CallResult {
  status: number;
  headers: Record<string, string>;
  // Tests read arbitrary response fields; the contract validation has already checked the shape.
  body: any;
}

export async function startTestService(opts: TestServiceOptions = {}): Promise<TestService> {
  const violations: string[] = [];
  const service = await startServer({
    seed: opts.seed,
    dbFile: opts.dbFile,
    config: opts.config,
    now: opts.now,
    logError: opts.logError,
    onResponse(info) {
      opts.onResponse?.(info);
      if (opts.validate === false || !info.operationId) return;
      const issues = [
        ...hooks.validateResponse(info.operationId, info.status, info.body),
        ...hooks.validateResponseHeaders(info.operationId, info.status, info.headers),
      ];
      for (const i of issues) violations.push(`${info.operationId} ${info.status}: ${i.path} ${i.message}`);
    },
  });
  const admin = service.admin;
  const ws = admin.createWorkspace({ name: 'Test workspace', slug: 'test' });
  const user = admin.createUser({ name: 'Tess Tester', email: 'tess@test.example' });
  admin.addMember(ws.id, user.id);
  const projectKey = opts.projectKey ?? 'PROJ';
  admin.createProject({ workspaceId: ws.id, key: projectKey, name: 'Test project' });
  const { token } = admin.createToken({ workspaceId: ws.id, userId: user.id });
  return {
    url: service.url,
    api: `${service.url}/api/v1`,
    admin,
    db: service.db,
    service,
    token,
    workspaceId: ws.id,
    userId: user.id,
    projectKey,
    violations,
    async call(method, path, c = {}) {
      const headers: Record<string, string> = { ...c.headers };
      const tok = c.token === undefined ? token : c.token;
      if (tok !== null) headers.authorization = `Bearer ${tok}`;
      let payload: string | undefined = c.raw;
      if (c.body !== undefined) payload = JSON.stringify(c.body);
      if (payload !== undefined) headers['content-type'] = 'application/json';
      // After a long synchronous stretch (a test writing through the admin API), the service may
      // close an idle kept-alive connection in the very turn this request would reuse it (seen as
      // ECONNRESET on a loaded machine): two turns of the event loop let that close arrive first,
      // as src/api/http-agent.ts does for the product's own requests.
      await new Promise(setImmediate);
      await new Promise(setImmediate);
      const res = await fetch(`${service.url}/api/v1${path}`, { method, headers, body: payload });
      const text = await res.text();
      return { status: res.status, headers: Object.fromEntries(res.headers), body: text ? JSON.parse(text) : undefined };
    },
    async close() {
      await service.close();
      if (violations.length > 0) {
        throw new Error(`responses violated the contract document:\n${[...new Set(violations)].join('\n')}`);
      }
    },
  };
}

/**
 * One service for the whole calling file (beforeAll), closed after its last test (afterAll, which
 * fails the file on a contract violation). Its fields are there once the file's tests run.
 */
export function serviceForFile(opts: TestServiceOptions = {}): TestService {
  const s = {} as TestService;
  beforeAll(async () => {
    Object.assign(s, await startTestService(opts));
  });
  afterAll(async () => {
    await s.close?.();
  });
  return s;
}
